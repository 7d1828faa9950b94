// What every test server of the suites does alike: keep its connections (so that stopping
// it ends them), swallow their errors, and listen on a free loopback port or a unix socket.
import type { Socket } from 'node:net'

type Listenable = { listen: Function; address: Function; once: Function }

/** A `connection` handler keeping each socket in `sockets` while it is open. */
export function tracked(sockets: Set<Socket>) {
  return (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
  }
}

/** Listens on a free port of 127.0.0.1; resolves `127.0.0.1:<port>`. */
export async function listen(server: Listenable): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  return `127.0.0.1:${(server.address() as { port: number }).port}`
}

/** Listens on the unix socket at `path`. */
export async function listenAt(server: Listenable, path: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => resolve())
  })
}
