// A throwaway OCI registry for the suites: the Debian package's `docker-registry serve` on
// 127.0.0.1 with a temp storage directory, publishing of devcontainer features with plain
// HTTP calls of the distribution API (independent of the library's own client), and
// images pushed with the engine's own CLI.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { engineCli, IMAGES, isPodman, tempDir } from './helpers'

export const LAYER_MEDIA_TYPE = 'application/vnd.devcontainers.layer.v1+tar'

const sha256 = (data: Buffer) => `sha256:${createHash('sha256').update(data).digest('hex')}`

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      server.close(() => resolve(port))
    })
  })
}

/** A tar of `files` (name → content; names ending in `.sh` executable), made by tar(1). */
export function featureTar(files: Record<string, string | Buffer>): Buffer {
  const dir = tempDir('feature-tar')
  try {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(join(dir.path, name, '..'), { recursive: true })
      writeFileSync(join(dir.path, name), content, { mode: name.endsWith('.sh') ? 0o755 : 0o644 })
    }
    return execFileSync('tar', ['-cf', '-', '-C', dir.path, '.'], { maxBuffer: 256 << 20 })
  } finally {
    dir.cleanup()
  }
}

export interface Registry {
  /** `127.0.0.1:<port>`. */
  host: string
  /** Where the registry keeps its files (to tamper with a blob). */
  storage: string
  /** Uploads `layer` as a feature's artifact and tags it; returns the layer's and the manifest's digests. */
  publish(repository: string, tag: string, layer: Buffer): Promise<{ layer: string; manifest: string }>
  /**
   * Tags as `indexTag` an index (OCI index, or Docker manifest list, after the manifest's
   * own kind) that holds `repository:tag`'s manifest for `platform` (`os/arch`) alone.
   */
  index(repository: string, tag: string, indexTag: string, platform: string): Promise<void>
  /** The path of a blob's data in the storage. */
  blobPath(digest: string): string
  stop(): Promise<void>
}

/** A bcrypt htpasswd line (the registry reads only bcrypt), by Python's crypt. */
function htpasswd(user: string, password: string): string {
  const hash = execFileSync(
    'python3',
    ['-W', 'ignore', '-c', 'import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))', password],
    { encoding: 'utf8' },
  ).trim()
  return `${user}:${hash}\n`
}

/** Starts the registry; with `auth`, it asks for that user and password (HTTP basic). */
export async function startRegistry(auth?: { user: string; password: string }): Promise<Registry> {
  const dir = tempDir('registry')
  const port = await freePort()
  const host = `127.0.0.1:${port}`
  const storage = join(dir.path, 'data')
  const config = join(dir.path, 'config.yml')
  let authConfig = ''
  if (auth) {
    writeFileSync(join(dir.path, 'htpasswd'), htpasswd(auth.user, auth.password))
    authConfig = `auth:\n  htpasswd:\n    realm: test\n    path: ${join(dir.path, 'htpasswd')}\n`
  }
  const headers: Record<string, string> = auth
    ? { authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}` }
    : {}
  writeFileSync(
    config,
    `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${storage}\n${authConfig}http:\n  addr: ${host}\n`,
  )
  const child: ChildProcess = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'ignore', 'inherit'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const base = `http://${host}`
  const deadline = Date.now() + 15_000
  for (;;) {
    try {
      if ((await fetch(`${base}/v2/`, { headers })).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL')
      dir.cleanup()
      throw new Error('docker-registry did not start')
    }
    await new Promise((r) => setTimeout(r, 100))
  }

  async function uploadBlob(repository: string, data: Buffer): Promise<string> {
    const digest = sha256(data)
    const start = await fetch(`${base}/v2/${repository}/blobs/uploads/`, { method: 'POST', headers })
    if (start.status !== 202) throw new Error(`upload start: ${start.status}`)
    const location = new URL(start.headers.get('location')!, base)
    location.searchParams.set('digest', digest)
    const put = await fetch(location, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': String(data.length) },
      body: new Uint8Array(data),
    })
    if (put.status !== 201) throw new Error(`upload: ${put.status} ${await put.text()}`)
    return digest
  }

  return {
    host,
    storage,
    async publish(repository, tag, layer) {
      const configBlob = Buffer.from('{}')
      const configDigest = await uploadBlob(repository, configBlob)
      const layerDigest = await uploadBlob(repository, layer)
      const manifest = {
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.devcontainers', digest: configDigest, size: configBlob.length },
        layers: [
          {
            mediaType: LAYER_MEDIA_TYPE,
            digest: layerDigest,
            size: layer.length,
            annotations: { 'org.opencontainers.image.title': `devcontainer-feature-${repository.split('/').pop()}.tgz` },
          },
        ],
      }
      const body = Buffer.from(JSON.stringify(manifest))
      const put = await fetch(`${base}/v2/${repository}/manifests/${tag}`, {
        method: 'PUT',
        headers: { ...headers, 'content-type': manifest.mediaType },
        body: new Uint8Array(body),
      })
      if (put.status !== 201) throw new Error(`manifest: ${put.status} ${await put.text()}`)
      return { layer: layerDigest, manifest: sha256(body) }
    },
    async index(repository, tag, indexTag, platform) {
      const accept = ['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json'].join(', ')
      const got = await fetch(`${base}/v2/${repository}/manifests/${tag}`, { headers: { ...headers, accept } })
      if (got.status !== 200) throw new Error(`manifest: ${got.status}`)
      const mediaType = (got.headers.get('content-type') ?? '').split(';')[0]
      const manifest = Buffer.from(await got.arrayBuffer())
      const [os, architecture] = platform.split('/')
      const indexType = mediaType.includes('oci')
        ? 'application/vnd.oci.image.index.v1+json'
        : 'application/vnd.docker.distribution.manifest.list.v2+json'
      const body = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: indexType,
          manifests: [{ mediaType, digest: sha256(manifest), size: manifest.length, platform: { os, architecture } }],
        }),
      )
      const put = await fetch(`${base}/v2/${repository}/manifests/${indexTag}`, {
        method: 'PUT',
        headers: { ...headers, 'content-type': indexType },
        body: new Uint8Array(body),
      })
      if (put.status !== 201) throw new Error(`index: ${put.status} ${await put.text()}`)
    },
    blobPath(digest) {
      const hex = digest.replace('sha256:', '')
      return join(storage, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data')
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM')
        await exited
      }
      dir.cleanup()
    },
  }
}

/**
 * Builds an image from the busybox test image plus `bytes` of random data in a layer of
 * its own (so that a pull downloads it), pushes it to `registry` as `name` with the
 * engine's CLI and the registry's credentials, and removes it from the engine again.
 * Returns `host/name`.
 */
export function pushRandomImage(
  registry: Registry,
  auth: { user: string; password: string } | undefined,
  name: string,
  bytes: number,
): string {
  const reference = `${registry.host}/${name}`
  const context = tempDir('image-context')
  const config = tempDir('push-config')
  try {
    writeFileSync(join(context.path, 'blob'), randomBytes(bytes))
    writeFileSync(join(context.path, 'Dockerfile'), `FROM ${IMAGES.busybox}\nCOPY blob /blob\n`)
    engineCli('build', '-q', '-t', reference, context.path)
    if (isPodman) {
      const creds = auth ? ['--creds', `${auth.user}:${auth.password}`] : []
      engineCli('push', '-q', '--tls-verify=false', ...creds, reference)
    } else {
      if (auth) {
        const token = Buffer.from(`${auth.user}:${auth.password}`).toString('base64')
        writeFileSync(join(config.path, 'config.json'), JSON.stringify({ auths: { [registry.host]: { auth: token } } }))
      }
      engineCli('--config', config.path, 'push', '-q', reference)
    }
    engineCli('rmi', reference)
    return reference
  } finally {
    context.cleanup()
    config.cleanup()
  }
}
