// An engine socket of the test's own in front of the engine under test: every request goes
// through to the real engine, except the image inspects (`GET /images/<name>/json`) whose
// name matches, which get no answer: the connection is closed at once (`close`), or held
// open and never answered (`silent`). That is an engine that stops answering on one call,
// which a running engine cannot be made to do by itself.
import { request, createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { tempDir } from './helpers'
import { listenAt, tracked } from './test-server'

export interface FaultyEngine {
  socketPath: string
  /** `METHOD /path` of every request, decoded, the version prefix and query taken off. */
  requests(): string[]
  stop(): Promise<void>
}

const INSPECT = /^\/images\/(.+)\/json$/

export async function startFaultyEngine(target: string, fault: { inspect: RegExp; how: 'close' | 'silent' }): Promise<FaultyEngine> {
  const dir = tempDir('faulty-engine')
  const socketPath = join(dir.path, 'engine.sock')
  const log: string[] = []
  const sockets = new Set<Socket>()
  const unversioned = (url: string) => decodeURIComponent(url.split('?')[0].replace(/^\/v[0-9.]+\//, '/'))

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = unversioned(req.url ?? '/')
    log.push(`${req.method} ${path}`)
    const inspected = INSPECT.exec(path)
    if (req.method === 'GET' && inspected && fault.inspect.test(inspected[1])) {
      if (fault.how === 'close') req.socket.destroy()
      return
    }
    const upstream = request({ socketPath: target, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(res)
    })
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  // Hijacked streams (attach, exec) go through as bytes.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    log.push(`${req.method} ${unversioned(req.url ?? '/')}`)
    const upstream = connect(target)
    const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`]
    for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`)
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`)
    upstream.write(head)
    socket.pipe(upstream).pipe(socket)
    upstream.on('error', () => socket.destroy())
    socket.on('error', () => upstream.destroy())
  })
  server.on('connection', tracked(sockets))
  await listenAt(server, socketPath)
  return {
    socketPath,
    requests: () => [...log],
    async stop() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      dir.cleanup()
    },
  }
}
