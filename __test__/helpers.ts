// Shared set-up for the suites: the engine under test, the offline test images, and a
// runtime whose containers are all removed after the suite.
import { execFileSync } from 'node:child_process'
import { createConnection } from 'node:net'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
export const addon: typeof import('../lib/index') = require('../lib/index.js')

export const IMAGES = {
  debian: 'container-isolation-test:debian',
  busybox: 'container-isolation-test:busybox',
  noshell: 'container-isolation-test:noshell',
  /** The Debian rootfs with PostgreSQL (its command) and Redis, psql and redis-cli. */
  postgres: 'container-isolation-test:postgres',
  /** The same rootfs, running redis-server on loopback. */
  redis: 'container-isolation-test:redis',
} as const

const env = process.env

/**
 * The engine on "another machine" the suites run against, if any: TEST_ENGINE_HOST, or the
 * rig's endpoint for this pass's transport (vitest.remote.config.ts starts the rig,
 * scripts/remote-engine.mjs, once for its two projects, `tls` and `ssh`).
 */
export const remoteHost: string | undefined =
  env.TEST_ENGINE_HOST ?? (env.TEST_REMOTE_TRANSPORT === 'ssh' ? env.TEST_REMOTE_SSH_HOST : env.TEST_REMOTE_TLS_HOST)

/** Whether the suites run remotely: the engine's volumes and pids are not this machine's. */
export const isRemote = Boolean(remoteHost)

/** The rig's TLS client material (both transports: the CLI checks always go over TLS). */
const remoteTls = { ca: env.TEST_ENGINE_TLS_CA ?? '', cert: env.TEST_ENGINE_TLS_CERT ?? '', key: env.TEST_ENGINE_TLS_KEY ?? '' }

function remoteEngine(host: string) {
  if (host.startsWith('ssh://')) {
    return { host, ssh: { keyFile: env.TEST_ENGINE_SSH_KEY ?? '', knownHostsFile: env.TEST_ENGINE_SSH_KNOWN_HOSTS ?? '' } }
  }
  return { host, tls: remoteTls }
}

/**
 * The engine under test: `remoteHost`, else TEST_ENGINE_SOCKET, else
 * dockerd. `socketPath` is typed for the local suites that reach the socket themselves;
 * those never run remotely, where it is absent.
 */
export const engine = (isRemote
  ? remoteEngine(remoteHost!)
  : { socketPath: env.TEST_ENGINE_SOCKET ?? '/var/run/docker.sock' }) as { socketPath: string }

/** Whether the suites run against Podman's Docker-compatible service. */
export const isPodman = !isRemote && engine.socketPath.includes('podman')

/**
 * How much longer than on a quiet local dockerd a bound on elapsed time may be: a call over
 * ssh crosses a tunnel and a login shell's worth of processes, Podman's service forks
 * conmon and runc for what dockerd does in-process, and `npm test` runs every pass at once on
 * two cores. What such a bound tests is that something happens at all without waiting for
 * an unrelated end (a kill without the grace, a line before the program's exit), not speed.
 */
export const timeScale = (isRemote ? 3 : isPodman ? 2 : 1) * Number(env.TEST_TIME_SCALE ?? 1)

const CLI = isPodman ? 'podman' : existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker'
const CLI_ARGS = isRemote
  ? ['-H', env.TEST_ENGINE_TCP_HOST ?? '', '--tlsverify', '--tlscacert', remoteTls.ca, '--tlscert', remoteTls.cert, '--tlskey', remoteTls.key]
  : []

/** The engine's own CLI, for checks and set-ups the library does not offer (the rig: over TLS). */
export function engineCli(...args: string[]): string {
  return execFileSync(CLI, [...CLI_ARGS, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 }).trim()
}

export function tempDir(prefix: string): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), `ci-${prefix}-`))
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) }
}

/** A runtime with its own base directory, so `list()` sees only this suite's containers. */
export function suiteRuntime(prefix: string) {
  const base = tempDir(prefix)
  const runtime = new addon.DockerRuntime({ engine, image: IMAGES.debian, baseDir: base.path })
  const cleanup = async () => {
    for (const c of await runtime.list()) {
      await runtime.remove(c.id).catch(() => {})
    }
    base.cleanup()
  }
  return { runtime, baseDir: base.path, cleanup }
}

export async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise
  } catch (err) {
    return err as Error & { code?: string }
  }
  throw new Error('expected the promise to reject')
}

/**
 * Waits until `probe` holds (polled every 50 ms), instead of sleeping for a guess; fails,
 * naming `what`, when it has not held within `ms`.
 */
export async function eventually(what: string, probe: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`${what}: not so within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** git with a fixed identity (and any owner's repository), in `cwd`; its trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  const config = ['-c', 'user.name=T', '-c', 'user.email=t@e', '-c', 'safe.directory=*']
  return execFileSync('git', [...config, ...args], { cwd, encoding: 'utf8' }).trim()
}

/**
 * A temporary git repository on `main` with a README.md and `files` committed (`*.sh`
 * executable), for `Workspaces` to clone.
 */
export function gitProject(prefix: string, files: Record<string, string> = {}): { path: string; cleanup: () => void } {
  const d = tempDir(prefix)
  writeFileSync(join(d.path, 'README.md'), '# p\n')
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(d.path, name, '..'), { recursive: true })
    writeFileSync(join(d.path, name), text, { mode: name.endsWith('.sh') ? 0o755 : 0o644 })
  }
  git(d.path, 'init', '-q', '-b', 'main')
  git(d.path, 'add', '.')
  git(d.path, 'commit', '-q', '-m', 'init')
  return d
}

/** Runs `fn` with these environment variables set (or removed, for undefined), then restores them. */
export async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]))
  const apply = (v: Record<string, string | undefined>) => {
    for (const [k, val] of Object.entries(v)) {
      if (val === undefined) delete process.env[k]
      else process.env[k] = val
    }
  }
  apply(vars)
  try {
    return await fn()
  } finally {
    apply(saved)
  }
}

/**
 * Everything below `dir`, and `dir` itself, entry by entry: its type, mode, size and mtime
 * (in ns), and a file's bytes (as their SHA-256) or a link's target; a FIFO is described,
 * never opened. Equal manifests before and after mean nothing under `dir` was written,
 * added, removed or touched.
 */
export function folderManifest(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const visit = (rel: string) => {
    const path = rel ? join(dir, rel) : dir
    const st = lstatSync(path, { bigint: true })
    const head = `${st.mode.toString(8)} ${st.size} ${st.mtimeNs}`
    if (st.isDirectory()) {
      out[rel || '.'] = `dir ${head}`
      for (const name of readdirSync(path).sort()) visit(rel ? join(rel, name) : name)
    } else if (st.isSymbolicLink()) out[rel] = `link ${head} -> ${readlinkSync(path)}`
    else if (st.isFile()) out[rel] = `file ${head} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
    else out[rel] = `special ${head}`
  }
  visit('')
  return out
}

/**
 * A folder that is not a git repository, with what a snapshot must take and must leave
 * alone: files (one executable), symlinks (inside, outside, dangling), a `.gitignore` and
 * a nested one, files they and the library's defaults ignore (`node_modules/`, `.env`,
 * `*.log`), an empty folder and a FIFO. Its mtimes are set in the past, so that any write
 * shows.
 */
export function plainFolder(prefix: string): { path: string; cleanup: () => void } {
  const d = tempDir(prefix)
  const files: Record<string, string> = {
    'README.md': '# plain\n',
    'src/app.js': 'export const app = 1\n',
    'run.sh': '#!/bin/sh\necho ran\n',
    '.gitignore': '*.tmp\nbuild/\n',
    'scratch.tmp': 'ignored\n',
    'build/out.o': 'ignored\n',
    'node_modules/dep/index.js': 'ignored\n',
    '.env': 'SECRET=1\n',
    'debug.log': 'ignored\n',
    'docs/.gitignore': 'draft.md\n',
    'docs/draft.md': 'ignored\n',
    'docs/guide.md': '# guide\n',
  }
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(d.path, name, '..'), { recursive: true })
    writeFileSync(join(d.path, name), text)
  }
  chmodSync(join(d.path, 'run.sh'), 0o755)
  symlinkSync('src/app.js', join(d.path, 'app-link'))
  symlinkSync('/etc/hostname', join(d.path, 'outside-link'))
  symlinkSync('nowhere', join(d.path, 'dangling-link'))
  mkdirSync(join(d.path, 'empty'))
  execFileSync('mkfifo', [join(d.path, 'pipe')])
  const past = new Date('2020-01-02T03:04:05Z')
  const age = (rel: string) => {
    const path = join(d.path, rel)
    const st = lstatSync(path)
    if (st.isDirectory()) for (const name of readdirSync(path)) age(join(rel, name))
    if (!st.isSymbolicLink()) utimesSync(path, past, past)
  }
  age('')
  return d
}

/** The first line (without its CRLF) a server on 127.0.0.1:`port` of this host answers to `text`. */
export function firstLine(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => socket.write(text))
    let got = ''
    const done = () => {
      socket.destroy()
      resolve(got.split('\r\n')[0])
    }
    socket.setTimeout(10_000, () => socket.destroy(new Error(`127.0.0.1:${port}: no answer`)))
    socket.on('data', (d) => {
      got += d.toString()
      if (got.includes('\r\n')) done()
    })
    socket.on('close', done)
    socket.on('error', reject)
  })
}
