import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

type Compilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type SerializerFactory = NonNullable<Compilers['buildSerializer']>
type Serializer = ReturnType<ReturnType<SerializerFactory>>

// Fastify's own default compilers, resolved from Fastify's location: the versions it would pick itself.
const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))
const ValidatorSelector = fromFastify('@fastify/ajv-compiler') as () => NonNullable<Compilers['buildValidator']>
const SerializerSelector = fromFastify('@fastify/fast-json-stringify-compiler') as () => SerializerFactory

/**
 * The schema compilers of every app a test process builds. A file builds the app a few times and
 * each build compiled every route's validators (Ajv) and serializers (fast-json-stringify) again:
 * a seventh of an app-building file's CPU. Fastify's compilers are kept here for the process, so
 * a schema is compiled once: one Ajv per configuration (Fastify's own pool), which keeps what it
 * compiled by schema object, and each serializer kept by its schema object and configuration.
 * The functions are those Fastify makes when an app names no compilers, so the checks are the same;
 * an app that names compilers differs in one thing only, a headers schema is not lower-cased, and
 * no operation of the contract has one (test/suite/fixtures checks).
 */
const buildValidator = ValidatorSelector()

const defaultSerializers = SerializerSelector()
const serializers = new WeakMap<object, Map<string, Serializer>>()
const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = defaultSerializers(externalSchemas, options)
  const configuration = JSON.stringify([externalSchemas, options])
  return (route) => {
    const schema = route.schema
    if (typeof schema !== 'object' || schema === null) return compile(route)
    let byConfiguration = serializers.get(schema)
    if (byConfiguration === undefined) serializers.set(schema, byConfiguration = new Map())
    let serializer = byConfiguration.get(configuration)
    if (serializer === undefined) byConfiguration.set(configuration, serializer = compile(route))
    return serializer
  }
}

export const sharedCompilers: Compilers = { buildValidator, buildSerializer }
