// The egress suites' "internet", made of real parts on this machine only: a network
// namespace joined to the host by a veth pair (`internetNets`: a public range and a private
// range the host has an address in; each suite, on each engine's pass, takes ranges of its
// own, as the passes run side by side), servers inside it
// (fixtures/egress_internet.py), and canaries on the host's loopback and private address,
// each recording the requests it gets.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { git, isPodman, tempDir } from './helpers'

/**
 * A suite's ranges on this engine's pass: `suite` 0, 1 or 2 (egress.spec.ts,
 * egress-requests.spec.ts, compose.spec.ts) on dockerd and on Podman, six public /24s
 * (documentation and benchmarking ranges, public to the relay) and six private ones, so
 * that no two suites that may run at once share one.
 */
export function internetNets(suite: 0 | 1 | 2): Nets & { privateRange: string } {
  const slot = suite + (isPodman ? 3 : 0)
  // Only the benchmarking range (198.18.0.0/15): machines of this kind have their own address
  // in 192.0.2.0/24 and reach their package registries at an address in 203.0.113.0/24, and a
  // veth with a /24 there would take their route away while a suite runs (and for good when a
  // killed run leaves it, until scripts/sweep-test-containers.sh removes it).
  const publicNet = ['198.18.7', '198.19.7', '198.18.8', '198.19.8', '198.18.9', '198.19.9'][slot]
  const privateNet = `10.213.${7 + slot}`
  return {
    public: { host: `${publicNet}.1`, ns: `${publicNet}.2` },
    private: { host: `${privateNet}.1`, ns: `${privateNet}.2` },
    privateRange: `${privateNet}.0/24`,
  }
}

/** The Kubernetes pass's ranges (beside the engines' six): its egress suite's internet. */
export const KUBERNETES_NETS: Nets = {
  public: { host: '198.18.10.1', ns: '198.18.10.2' },
  private: { host: '10.213.13.1', ns: '10.213.13.2' },
}

const DEFAULT_NETS = internetNets(0)
export const PUBLIC = DEFAULT_NETS.public
export const PRIVATE = DEFAULT_NETS.private
export const PRIVATE_RANGE = DEFAULT_NETS.privateRange

/** The ranges of one suite's internet: suites that run at once each take their own. */
export interface Nets {
  public: { host: string; ns: string }
  private: { host: string; ns: string }
}

/** A request a server of the test internet received. */
export interface Seen {
  method: string
  host: string
  path: string
  body: string
}

export interface Internet {
  /** A bare repository with one commit, served at http://<ns>/repo.git. */
  commit: string
  /** The CA that signed the HTTPS server's certificate for `internet.test`. */
  caPem: string
  /** Canary ports on the host: 127.0.0.1 and the host's private address. */
  loopbackPort: number
  hostPrivatePort: number
  /** What the shared front (http://<ns>:8080, any Host, keep-alive) received, in order. */
  front: Seen[]
  /** What the canaries on the host received. */
  canaryHits: Seen[]
  stop(): Promise<void>
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

function canary(address: string, text: string, hits: Seen[]): Promise<Server> {
  const server = createServer((req, res) => {
    hits.push({ method: req.method ?? '', host: req.headers.host ?? '', path: req.url ?? '', body: '' })
    res.end(text)
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, address, () => resolve(server))
  })
}

function makeCertificate(dir: string): { cert: string; key: string; ca: string } {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' })
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=egress test CA',
    '-keyout', 'ca.key', '-out', 'ca.pem')
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=internet.test', '-keyout', 'server.key', '-out', 'server.csr')
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:internet.test\n')
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-days', '2', '-extfile', 'ext.cnf', '-out', 'server.pem')
  return { cert: join(dir, 'server.pem'), key: join(dir, 'server.key'), ca: join(dir, 'ca.pem') }
}

function makeRepository(dir: string): string {
  const work = join(dir, 'work')
  mkdirSync(work)
  writeFileSync(join(work, 'README.md'), '# served\n')
  git(work, 'init', '-q', '-b', 'main')
  git(work, 'add', '.')
  git(work, 'commit', '-q', '-m', 'served')
  git(dir, 'clone', '-q', '--bare', work, join(dir, 'repo.git'))
  git(join(dir, 'repo.git'), 'update-server-info')
  return git(work, 'rev-parse', 'HEAD')
}

// Bounds a part that never comes up, not its speed: under a full run's load, 10 s once passed.
export async function until(what: string, probe: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms
  while (!probe()) {
    if (Date.now() > end) throw new Error(`egress test net: ${what} did not come up within ${ms} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The /24s of `hosts` must be nobody's on this machine: no address in them, no route to them. */
function refuseRangesInUse(...hosts: string[]): void {
  const used = execFileSync('ip', ['-4', '-o', 'route', 'show', 'table', 'all'], { encoding: 'utf8' }) +
    execFileSync('ip', ['-4', '-o', 'addr'], { encoding: 'utf8' })
  for (const host of hosts) {
    const prefix = host.slice(0, host.lastIndexOf('.') + 1)
    if (used.split(/\s+/).some((word) => word.startsWith(prefix))) {
      throw new Error(`egress test net: ${prefix}0/24 is in use on this machine (an address or a route): not taking it`)
    }
  }
}

export async function startInternet(nets: Nets = DEFAULT_NETS): Promise<Internet> {
  const { public: pub, private: priv } = nets
  const ns = `ci-egress-${process.pid}`
  const hostIf = `cie${process.pid % 100000}h`
  const nsIf = `cie${process.pid % 100000}n`
  const dir = tempDir('egress-net')
  let server: ChildProcess | undefined
  const canaries: Server[] = []
  const front: Seen[] = []
  const canaryHits: Seen[] = []
  const stop = async () => {
    server?.kill('SIGKILL')
    server = undefined
    await Promise.all(canaries.splice(0).map((c) => new Promise((r) => c.close(r))))
    try {
      ip('netns', 'delete', ns)
    } catch {}
    try {
      ip('link', 'delete', hostIf)
    } catch {}
    dir.cleanup()
  }
  try {
    try {
      ip('netns', 'delete', ns)
    } catch {}
    try {
      ip('netns', 'add', ns)
    } catch (err) {
      throw new Error(`egress test net: 'ip netns add' is not permitted here: ${(err as Error).message}`)
    }
    refuseRangesInUse(pub.host, priv.host)
    ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf)
    ip('link', 'set', nsIf, 'netns', ns)
    ip('addr', 'add', `${pub.host}/24`, 'dev', hostIf)
    ip('addr', 'add', `${priv.host}/24`, 'dev', hostIf)
    ip('link', 'set', hostIf, 'up')
    ip('-n', ns, 'addr', 'add', `${pub.ns}/24`, 'dev', nsIf)
    ip('-n', ns, 'addr', 'add', `${priv.ns}/24`, 'dev', nsIf)
    ip('-n', ns, 'link', 'set', nsIf, 'up')
    ip('-n', ns, 'link', 'set', 'lo', 'up')
    const tls = makeCertificate(dir.path)
    const commit = makeRepository(dir.path)
    const script = fileURLToPath(new URL('./fixtures/egress_internet.py', import.meta.url))
    server = spawn('ip', ['netns', 'exec', ns, 'python3', '-u', script, pub.ns, priv.ns, dir.path, tls.cert, tls.key],
      { stdio: ['ignore', 'pipe', 'inherit'] })
    let ready = false
    let partial = ''
    server.stdout?.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) {
        if (line === 'ready') ready = true
        if (line.startsWith('REQ ')) front.push(JSON.parse(line.slice(4)) as Seen)
      }
    })
    await until('the namespace servers', () => ready)
    canaries.push(await canary('127.0.0.1', 'canary-loopback\n', canaryHits))
    canaries.push(await canary(priv.host, 'canary-host-private\n', canaryHits))
    const curl = (...args: string[]) => execFileSync('curl', ['-sS', '--max-time', '5', ...args], { encoding: 'utf8' })
    await until(`http://${pub.ns}/`, () => {
      try {
        return curl(`http://${pub.ns}/`) === 'internet-ok\n'
      } catch {
        return false
      }
    })
    return {
      commit,
      caPem: readFileSync(tls.ca, 'utf8'),
      loopbackPort: (canaries[0].address() as AddressInfo).port,
      hostPrivatePort: (canaries[1].address() as AddressInfo).port,
      front,
      canaryHits,
      stop,
    }
  } catch (err) {
    await stop()
    throw err
  }
}
