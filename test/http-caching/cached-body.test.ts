import t from 'tap'
import { gunzipSync, brotliDecompressSync } from 'node:zlib'
import { CachedBody, etagMatches, preferredEncoding } from '../../src/http-caching/cached-body.js'

t.test('a cached body is compressed only from 1 KiB on, each encoding once', async (t) => {
  const small = new CachedBody('[]')
  t.equal(small.compressible, false)
  t.equal(small.representation('gzip'), small.identity)
  t.equal(small.representation('br'), small.identity)
  const json = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ town: `Town ${i}`, price: 180.5 })))
  const large = new CachedBody(json)
  t.equal(gunzipSync(large.representation('gzip').bytes).toString(), json)
  t.equal(brotliDecompressSync(large.representation('br').bytes).toString(), json)
  t.equal(large.representation('br'), large.representation('br'), 'made once and kept')
  t.match(large.etag, /^"[A-Za-z0-9_-]{27}"$/)
})

t.test('preferredEncoding prefers br, honours q=0', async (t) => {
  t.equal(preferredEncoding(undefined), 'identity')
  t.equal(preferredEncoding('gzip, deflate, br'), 'br')
  t.equal(preferredEncoding('gzip'), 'gzip')
  t.equal(preferredEncoding('br;q=0, gzip;q=0.5'), 'gzip')
  t.equal(preferredEncoding('identity'), 'identity')
  t.equal(preferredEncoding('*'), 'br')
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
  const br = body.representation('br')
  t.equal(br.encoding, 'br')
  t.equal(br.etag, body.etag.replace(/"$/, '-br"'))
  t.equal(body.representation('gzip').etag, body.etag.replace(/"$/, '-gzip"'))
  t.equal(body.representation('identity').bytes, body.bytes)
  t.equal(body.bytes.toString(), 'x'.repeat(2000))
})
