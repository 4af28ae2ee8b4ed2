import t from 'tap'
import { gunzipSync, brotliDecompressSync } from 'node:zlib'
import { etagMatches, pickRepresentation, preferredEncoding, readyBody } from '../../src/http-caching/ready-body.js'

t.test('readyBody compresses only bodies of 1 KiB or more, once', async (t) => {
  const small = readyBody('[]')
  t.equal(small.gzip, undefined)
  t.equal(small.br, undefined)
  const json = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ town: `Town ${i}`, price: 180.5 })))
  const large = readyBody(json)
  t.equal(gunzipSync(large.gzip as Buffer).toString(), json)
  t.equal(brotliDecompressSync(large.br as Buffer).toString(), json)
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

t.test('pickRepresentation tags each encoding distinctly', async (t) => {
  const body = readyBody('x'.repeat(2000))
  const br = pickRepresentation(body, 'br')
  t.equal(br.encoding, 'br')
  t.equal(br.etag, body.etag.replace(/"$/, '-br"'))
  t.equal(pickRepresentation(body, 'gzip').etag, body.etag.replace(/"$/, '-gzip"'))
  t.equal(pickRepresentation(body, undefined).bytes, body.json)
  t.equal(pickRepresentation(readyBody('[]'), 'br').encoding, 'identity')
})
