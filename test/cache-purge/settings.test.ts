import t from '../support/file-test.js'
import { ConfigError, loadConfig } from '../../src/config.js'

t.test('[D70] CACHE_PURGE_URL and CACHE_PURGE_TOKEN: unset by default; a URL that is not http(s) says what it allows', async (t) => {
  t.strictSame([loadConfig({}).cachePurgeUrl, loadConfig({}).cachePurgeToken], [undefined, undefined])
  t.strictSame([loadConfig({ CACHE_PURGE_URL: ' ', CACHE_PURGE_TOKEN: '' }).cachePurgeUrl, loadConfig({ CACHE_PURGE_TOKEN: '' }).cachePurgeToken], [undefined, undefined], 'empty is unset')
  const config = loadConfig({ CACHE_PURGE_URL: 'http://127.0.0.1:6081/', CACHE_PURGE_TOKEN: 'purge-secret' })
  t.strictSame([config.cachePurgeUrl, config.cachePurgeToken], ['http://127.0.0.1:6081/', 'purge-secret'])
  const allowed = 'expected an http:// or https:// URL such as http://127.0.0.1:6081/'
  t.throws(() => loadConfig({ CACHE_PURGE_URL: 'varnish:6081' }), new ConfigError(`Invalid environment variable CACHE_PURGE_URL="varnish:6081": ${allowed}`))
  t.throws(() => loadConfig({ CACHE_PURGE_URL: 'ftp://purger:s3cret@cdn.example/purge' }),
    new ConfigError(`Invalid environment variable CACHE_PURGE_URL="ftp://***@cdn.example/purge": ${allowed}`), 'credentials never shown')
})
