// Registries of the pull suite's own: one that accepts connections and never answers, and
// one that serves an image copied from a real registry, its largest layer either slowly
// (so that engines report bytes as they come) or only half, and then nothing more.
import { createServer as createHttpServer } from 'node:http'
import { createServer, type Socket } from 'node:net'
import { listen, tracked } from './test-server'

export interface Stalling {
  host: string
  /** When the layer's first half went out (0: not yet). */
  stalledAt(): number
  /** When the engine closed its connections after the stall (0: not yet). */
  droppedAt(): number
  stop(): Promise<void>
}

/** Accepts every connection and never writes a byte. */
export async function startSilentRegistry(): Promise<Stalling> {
  const sockets = new Set<Socket>()
  const server = createServer(tracked(sockets))
  const host = await listen(server)
  return {
    host,
    stalledAt: () => 0,
    droppedAt: () => 0,
    async stop() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

const ACCEPT = [
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
].join(', ')

/**
 * Serves `repository:tag` of the registry at `source` (basic `auth`), anonymously: its
 * largest layer at `bytesPerSecond`, or with `stall` its first half and then nothing.
 */
export async function startServedRegistry(
  source: string,
  auth: { user: string; password: string },
  repository: string,
  tag: string,
  how: { stall: true } | { bytesPerSecond: number },
): Promise<Stalling> {
  const headers = { authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}` }
  const manifestResponse = await fetch(`http://${source}/v2/${repository}/manifests/${tag}`, {
    headers: { ...headers, accept: ACCEPT },
  })
  const manifestType = manifestResponse.headers.get('content-type') ?? ''
  const manifestDigest = manifestResponse.headers.get('docker-content-digest') ?? ''
  const manifest = Buffer.from(await manifestResponse.arrayBuffer())
  const parsed = JSON.parse(manifest.toString())
  const layers: Array<{ digest: string; size: number }> = parsed.layers
  const largest = layers.reduce((a, b) => (b.size > a.size ? b : a)).digest
  const blob = async (digest: string) =>
    Buffer.from(await (await fetch(`http://${source}/v2/${repository}/blobs/${digest}`, { headers })).arrayBuffer())
  const blobs = new Map<string, Buffer>()
  for (const digest of [parsed.config.digest, ...layers.map((l) => l.digest)]) blobs.set(digest, await blob(digest))

  let stalledAt = 0
  let droppedAt = 0
  const sockets = new Set<Socket>()
  const server = createHttpServer((req, res) => {
    const path = req.url ?? ''
    if (path === '/v2/' || path === '/v2') {
      res.writeHead(200, { 'docker-distribution-api-version': 'registry/2.0' }).end('{}')
      return
    }
    if (path.startsWith(`/v2/${repository}/manifests/`)) {
      res.writeHead(200, {
        'content-type': manifestType,
        'content-length': manifest.length,
        'docker-content-digest': manifestDigest,
      })
      res.end(req.method === 'HEAD' ? undefined : manifest)
      return
    }
    const digest = path.startsWith(`/v2/${repository}/blobs/`) ? path.split('/').pop()! : ''
    const data = blobs.get(digest)
    if (!data) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length, 'docker-content-digest': digest })
    if (req.method === 'HEAD') return void res.end()
    if (digest !== largest) return void res.end(data)
    if ('bytesPerSecond' in how) {
      const chunk = 64 << 10
      let sent = 0
      const timer = setInterval(() => {
        res.write(data.subarray(sent, sent + chunk))
        sent += chunk
        if (sent >= data.length) {
          clearInterval(timer)
          res.end()
        }
      }, (1000 * chunk) / how.bytesPerSecond)
      req.socket.on('close', () => clearInterval(timer))
      return
    }
    res.write(data.subarray(0, data.length >> 1), () => {
      stalledAt ||= Date.now()
    })
    req.socket.on('close', () => {
      if (stalledAt) droppedAt ||= Date.now()
    })
  })
  server.on('connection', tracked(sockets))
  const host = await listen(server)
  return {
    host,
    stalledAt: () => stalledAt,
    droppedAt: () => droppedAt,
    async stop() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
