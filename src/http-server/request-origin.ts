import { isIPv6 } from 'node:net'
import type { TLSSocket } from 'node:tls'
import type { FastifyRequest } from 'fastify'

/** A DNS name or IPv4 address: dot-separated labels of letters, digits and inner hyphens. */
const NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/
const WITH_PORT = /^(.*?)(?::(\d{1,5}))?$/

function validHost (value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const [, rawName = '', port] = WITH_PORT.exec(value.toLowerCase()) as RegExpExecArray
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return undefined
  const name = rawName.startsWith('[') && rawName.endsWith(']') ? (isIPv6(rawName.slice(1, -1)) ? rawName : undefined) : (NAME.test(rawName) ? rawName : undefined)
  if (name === undefined) return undefined
  return port === undefined ? name : `${name}:${port}`
}

/** The origin a client used, for absolute links; a forwarded value that is not valid is ignored, '' when not even Host is. */
export function requestOrigin (request: FastifyRequest): string {
  const host = validHost(request.host) ?? validHost(request.headers.host)
  if (host === undefined) return ''
  const claimed = request.protocol.toLowerCase()
  const protocol = claimed === 'http' || claimed === 'https' ? claimed : (request.socket as Partial<TLSSocket>).encrypted === true ? 'https' : 'http'
  return `${protocol}://${host}`
}
