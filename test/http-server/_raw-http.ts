import net from 'node:net'
import { paced } from '../support/pace.js'

/**
 * HTTP/1.1 by hand over node:net, for tests about the connection itself (a withheld body, bytes
 * trickled one a second): every byte on the wire is the test's to choose and to time.
 */
export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export interface RawConnection {
  socket: net.Socket
  /** The next complete response on this connection (Content-Length framed, as this app sends). */
  response: (timeoutMs?: number) => Promise<RawResponse>
  /** Resolves when the server has closed the connection (end, reset or close). */
  closed: Promise<void>
  isClosed: () => boolean
}

export async function connect (port: number): Promise<RawConnection> {
  const socket = net.connect({ port, host: '127.0.0.1' })
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  let buffer = Buffer.alloc(0)
  let wake: (() => void) | undefined
  let ended = false
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    wake?.()
  })
  const closed = new Promise<void>((resolve) => {
    const done = (): void => { ended = true; wake?.(); resolve() }
    socket.once('end', done)
    socket.once('close', done)
    socket.on('error', () => {}) // a reset is one way of being closed
  })
  const next = (): RawResponse | undefined => {
    const head = buffer.indexOf('\r\n\r\n')
    if (head === -1) return undefined
    const [statusLine = '', ...lines] = buffer.subarray(0, head).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const length = Number(headers['content-length'] ?? 0)
    if (buffer.length < head + 4 + length) return undefined
    const body = buffer.subarray(head + 4, head + 4 + length).toString('utf8')
    buffer = buffer.subarray(head + 4 + length)
    return { status: Number(statusLine.split(' ')[1]), headers, body }
  }
  // the bound only turns "never" into a failure, so it grows on a slow host
  const response = async (usualMs = 5000): Promise<RawResponse> => {
    const timeoutMs = paced(usualMs)
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = next()
      if (found !== undefined) return found
      if (ended) throw new Error('connection closed before a complete response')
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no complete response within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        wake = () => { clearTimeout(timer); wake = undefined; resolve() }
      })
    }
  }
  return { socket, response, closed, isClosed: () => ended }
}

/** A request head, CRLF-terminated, ready to write. */
export function head (requestLine: string, headers: Record<string, string | number>): string {
  return `${requestLine}\r\n` + Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n'
}
