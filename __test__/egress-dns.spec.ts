// A name the policy can never allow is refused before any DNS query leaves the host: the
// host's DNS queries are no channel out of a session. Counted for real: dnsmasq on a
// loopback address of its own logs every query it gets, and the host side (a child node
// that uses the addon: Workspaces.create with the policy, then curl in the container
// through the relay) runs in a mount namespace whose /etc/resolv.conf names that dnsmasq.
// The machine's own resolver settings are never touched.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { Resolver } from 'node:dns/promises'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { engine, gitProject, IMAGES, tempDir } from './helpers'

const dir = tempDir('egress-dns')
const project = gitProject('egress-dns-project')
const address = `127.53.${(process.pid >> 8) & 255}.${(process.pid & 255) || 1}`
const log = join(dir.path, 'queries.log')
let dnsmasq: ChildProcess | undefined

/** The names dnsmasq was asked for, once per query. */
function queries(): string[] {
  return readFileSync(log, 'utf8')
    .split('\n')
    .map((line) => /query\[\w+\] (\S+) from /.exec(line)?.[1])
    .filter((name): name is string => name !== undefined)
}

beforeAll(async () => {
  try {
    execFileSync('dnsmasq', ['--version'], { stdio: 'ignore' })
  } catch {
    throw new Error("egress-dns: dnsmasq is missing (Debian's dnsmasq-base; scripts/provision.sh installs it)")
  }
  dnsmasq = spawn('dnsmasq', [
    '--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', '--pid-file=',
    '--user=root', '--bind-interfaces', `--listen-address=${address}`, '--port=53',
    '--log-queries', `--log-facility=${log}`, '--local=/test/',
    '--address=/probe.dns.test/192.0.2.1',
    // Both resolve to loopback: the relay refuses them after the lookup, saying so.
    '--address=/allowed.dns.test/127.0.0.1', '--address=/approved.dns.test/127.0.0.1',
  ], { stdio: ['ignore', 'ignore', 'inherit'] })
  const resolver = new Resolver({ timeout: 500, tries: 1 })
  resolver.setServers([address])
  const end = Date.now() + 10_000
  for (;;) {
    try {
      if ((await resolver.resolve4('probe.dns.test'))[0] === '192.0.2.1') break
    } catch (err) {
      if (Date.now() > end) throw new Error(`egress-dns: dnsmasq on ${address} does not answer: ${(err as Error).message}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
})
afterAll(() => {
  dnsmasq?.kill('SIGTERM')
  dir.cleanup()
  project.cleanup()
})

/** What the child says each request got, run with only `nameserver <address>` to resolve. */
async function hostSide(requests: Record<string, string>): Promise<Record<string, string>> {
  const lib = fileURLToPath(new URL('../lib/index.js', import.meta.url))
  const script = join(dir.path, 'host-side.cjs')
  writeFileSync(script, `
    const { Workspaces } = require(${JSON.stringify(lib)})
    const { config, requests } = JSON.parse(process.argv[2])
    ;(async () => {
      const ws = new Workspaces({ baseDir: config.baseDir, engine: config.engine, image: config.image })
      const egress = { allow: ['allowed.dns.test'], onRequest: ({ host }) => host === 'approved.dns.test' }
      await ws.create({ projectDir: config.projectDir, sessionId: config.sessionId, lifetime: 'process', egress })
      const env = await ws.environment(config.sessionId, 'egress-dns')
      const out = {}
      for (const [key, command] of Object.entries(requests)) {
        const r = await env.shell.execute(command, { toolRequestId: key })
        out[key] = 'exit ' + r.exitCode + '\\n' + r.output.map((l) => l.text).join('\\n')
      }
      await ws.destroy(config.sessionId)
      process.stdout.write(JSON.stringify(out))
    })().catch((err) => { console.error(err); process.exit(1) })
  `)
  const resolv = join(dir.path, 'resolv.conf')
  writeFileSync(resolv, `nameserver ${address}\noptions attempts:1 timeout:2\n`)
  const config = { baseDir: join(dir.path, 'base'), engine, image: IMAGES.debian, projectDir: project.path, sessionId: `egd${process.pid}` }
  // The bind mount exists only in the child's mount namespace (unshare makes it private).
  const { stdout } = await promisify(execFile)('unshare', [
    '--mount', '--', 'sh', '-c', 'mount --bind "$0" /etc/resolv.conf && exec "$@"',
    resolv, process.execPath, script, JSON.stringify({ config, requests }),
  ], { maxBuffer: 16 * 1024 * 1024 })
  return JSON.parse(stdout) as Record<string, string>
}

describe('egress and DNS', () => {
  it('under an allow list of names, a refused name causes no DNS query (HTTP, CONNECT, SOCKS5); an allowed or approved one is looked up', async () => {
    const exfil = (c: string) => `${c.repeat(63)}.exfil.dns.test`
    const curl = (args: string) => `curl -sS -i --max-time 20 ${args}`
    const said = await hostSide({
      plain: curl(`http://${exfil('x')}/`),
      tunnel: curl(`https://${exfil('y')}/`),
      socks: curl(`-x socks5h://127.0.0.1:1080 http://${exfil('z')}/`),
      allowed: curl('http://allowed.dns.test/'),
      approved: curl('http://approved.dns.test/'),
    })
    const asked = queries()
    console.log(`dnsmasq was asked for: ${asked.join(', ')}`)
    expect(asked.filter((name) => name.includes('exfil'))).toEqual([])
    expect(said.plain).toContain(`container-isolation: egress to ${exfil('x')}:80 refused by the session's policy (onRequest did not allow it)`)
    expect(said.tunnel).toMatch(/^exit [1-9]/)
    expect(said.tunnel).toContain('403')
    expect(said.socks).toMatch(/^exit [1-9]/)
    // The counter works: the names the policy could allow were looked up, and refused for
    // the loopback address they resolved to.
    expect(asked.filter((name) => name === 'allowed.dns.test').length).toBeGreaterThanOrEqual(1)
    expect(asked.filter((name) => name === 'approved.dns.test').length).toBeGreaterThanOrEqual(1)
    expect(said.allowed).toContain('127.0.0.1 is a loopback address')
    expect(said.approved).toContain('127.0.0.1 is a loopback address')
    // The machine's own resolver settings are as they were.
    expect(readFileSync('/etc/resolv.conf', 'utf8')).not.toContain(address)
  }, 120_000)
})
