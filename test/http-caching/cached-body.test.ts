import t from '../support/file-test.js'
import { gunzipSync, brotliDecompressSync } from 'node:zlib'
import { BR, CachedBody, GZIP, acceptedEncodings, etagMatches } from '../../src/http-caching/cached-body.js'

t.test('a cached body is compressed only from 1 KiB on, each encoding once', async (t) => {
  const small = new CachedBody('[]')
  t.equal(small.compressible, false)
  t.equal(small.representation(GZIP), small.identity)
  t.equal(small.representation(BR | GZIP), small.identity)
  const json = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ town: `Town ${i}`, price: 180.5 })))
  const large = new CachedBody(json)
  t.equal(gunzipSync(large.representation(GZIP).bytes).toString(), json)
  t.equal(large.representation(GZIP), large.gzipped(), 'made once and kept')
  const br = await large.brotli()
  t.equal(brotliDecompressSync(br.bytes).toString(), json)
  t.equal(await large.brotli(), br, 'made once and kept')
  t.equal(large.representation(BR | GZIP), br)
  t.match(large.etag, /^"[A-Za-z0-9_-]{27}"$/)
})

t.test('until brotli is made off the event loop, a brotli client gets gzip if it takes it, else identity', async (t) => {
  const json = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ town: `Town ${i}`, price: 180.5 })))
  const body = new CachedBody(json)
  // The thread pool cannot answer within this synchronous stretch: the first answers are made without it.
  t.equal(body.representation(BR | GZIP).encoding, 'gzip')
  t.equal(body.representation(BR).encoding, 'identity', 'a client that takes only brotli never gets gzip')
  const br = await body.brotli()
  t.equal(body.representation(BR), br)
  t.equal(body.representation(BR | GZIP), br)
  t.equal(body.representation(GZIP).encoding, 'gzip')
  t.equal(body.representation(0), body.identity)
})

t.test('acceptedEncodings: brotli and gzip as bits, honouring q=0', async (t) => {
  t.equal(acceptedEncodings(undefined), 0)
  t.equal(acceptedEncodings(''), 0)
  t.equal(acceptedEncodings('gzip, deflate, br'), BR | GZIP)
  t.equal(acceptedEncodings('gzip'), GZIP)
  t.equal(acceptedEncodings('x-gzip'), GZIP)
  t.equal(acceptedEncodings('br'), BR)
  t.equal(acceptedEncodings('br;q=0, gzip;q=0.5'), GZIP)
  t.equal(acceptedEncodings('identity'), 0)
  t.equal(acceptedEncodings('*'), BR | GZIP)
})

t.test('[D18] If-None-Match matches weak, listed and encoded variants of the tag', async (t) => {
  t.equal(etagMatches('"abc"', '"abc"'), true)
  t.equal(etagMatches('W/"abc"', '"abc"'), true)
  t.equal(etagMatches('"x", "abc-gzip"', '"abc"'), true)
  t.equal(etagMatches('"abc-br"', '"abc"'), true)
  t.equal(etagMatches('*', '"abc"'), true)
  t.equal(etagMatches('"abd"', '"abc"'), false)
  t.equal(etagMatches(undefined, '"abc"'), false)
})

t.test('each encoding of a body has its own tag, the identity tag with a suffix', async (t) => {
  const body = new CachedBody('x'.repeat(2000))
  const br = await body.brotli()
  t.equal(br.encoding, 'br')
  t.equal(br.etag, body.etag.replace(/"$/, '-br"'))
  t.equal(body.representation(GZIP).etag, body.etag.replace(/"$/, '-gzip"'))
  t.equal(body.representation(0).bytes, body.bytes)
  t.equal(body.bytes.toString(), 'x'.repeat(2000))
})
