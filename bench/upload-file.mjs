/**
 * One CSV upload from a process of its own (see upload-reads.ts): `node upload-file.mjs URL FILE
 * TOKEN ADDRESS` posts FILE as the multipart field `file` with the bearer TOKEN, claiming client
 * ADDRESS, and prints the status and the milliseconds to the answer's end as one JSON line.
 */
/* global fetch, FormData */ // Node's own, unknown to eslint's rules for .mjs files
import { Blob } from 'node:buffer'
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import process from 'node:process'

const [url, path, token, address] = process.argv.slice(2)
const form = new FormData()
form.append('file', new Blob([readFileSync(path)], { type: 'text/csv' }), 'prices.csv')
const start = performance.now()
const res = await fetch(url, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': address } })
await res.arrayBuffer()
process.stdout.write(JSON.stringify({ status: res.status, ms: performance.now() - start }) + '\n')
