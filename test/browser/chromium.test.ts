import t from '../support/file-test.js'
import http from 'node:http'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { needs } from '../services.js'
import { dumpDom, screenshot } from './chromium.js'

const PAGE = `<!doctype html>
<html><head><title>probe</title></head>
<body><div id="out">static</div>
<script>
  setTimeout(() => { document.getElementById('out').textContent = 'written by ' + 'script after timer' }, 500)
</script>
</body></html>`

t.test('the Chromium helper runs page scripts and returns the resulting DOM', await needs('chromium'), async (t) => {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(PAGE)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const { port } = server.address() as { port: number }
  const url = `http://127.0.0.1:${port}/`

  const dom = await dumpDom(url)
  t.match(dom, '<div id="out">written by script after timer</div>')
  t.notMatch(dom, '>static<')

  const dir = await mkdtemp(join(tmpdir(), 'chromium-shot-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'page.png')
  await screenshot(url, file)
  const png = await readFile(file)
  t.strictSame([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG file')
  t.equal(png.readUInt32BE(16), 1280, 'width')
  t.equal(png.readUInt32BE(20), 2000, 'height')
})
