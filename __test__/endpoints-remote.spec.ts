// Engines on another machine, through the remote-engine rig (scripts/remote-engine.mjs: a
// dockerd in its own network namespace with TLS on tcp://<ip>:2376 and an sshd): TLS
// verified against the CA and refused with ENGINE_TLS otherwise, ssh:// through the system
// ssh client with what ssh said in errors, DOCKER_HOST/DOCKER_TLS_VERIFY/DOCKER_CERT_PATH,
// a docker context with TLS material, containers run over both transports, and the
// locality probe that says "not local" and leaves no volume. Skipped where the rig is absent.
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, rejection, withEnv } from './helpers'

const RIG = new URL('../scripts/remote-engine.mjs', import.meta.url)
const BUSYBOX = 'container-isolation-test:busybox'

interface Rig {
  tcpHost: string
  sshHost: string
  tls: { ca: string; cert: string; key: string }
  certPath: string
  wrongCa: string
  ssh: { keyFile: string; knownHostsFile: string }
  cli(...args: string[]): string
  cleanup(): Promise<void>
}

/** This process's `ssh … dial-stdio` children (one per open connection to an ssh:// engine). */
function sshChildren(): number[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      return ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dial-stdio')
    } catch {
      return false
    }
  })
}

describe.skipIf(!existsSync(fileURLToPath(RIG)))('engines on another machine', () => {
  let rig: Rig
  beforeAll(async () => {
    const { RemoteEngine } = await import(RIG.href)
    rig = await new RemoteEngine().start({ images: [BUSYBOX] })
  }, 240_000)
  afterAll(async () => {
    await rig?.cleanup()
  }, 120_000)

  it('speaks TLS verified against the given CA, and finds the engine is not local', async () => {
    const info = await addon.detectEngine({ host: rig.tcpHost, tls: rig.tls })
    expect(info.kind).toBe('docker')
    expect(info.endpoint).toBe(rig.tcpHost.replace('tcp://', 'https://'))
    expect(info.local).toBe(false)
    expect(rig.cli('volume', 'ls', '-q', '--filter', 'label=container-isolation.probe')).toBe('')
  })

  it('refuses a server its CA did not sign, and a handshake without a client certificate, with ENGINE_TLS', async () => {
    const wrongCa = await rejection(addon.detectEngine({ host: rig.tcpHost, tls: { ...rig.tls, ca: rig.wrongCa } }))
    expect(wrongCa.code).toBe('ENGINE_TLS')
    expect(wrongCa.message).toContain('not signed by a trusted CA')
    const noCert = await rejection(addon.detectEngine({ host: rig.tcpHost, tls: { ca: rig.tls.ca } }))
    expect(noCert.code).toBe('ENGINE_TLS')
    expect(noCert.message).toContain('client certificate')
    const plain = await rejection(addon.detectEngine({ host: rig.tcpHost, timeoutMs: 5000 }))
    expect(plain.code).toBe('ENGINE_UNAVAILABLE')
  })

  it('skips verification only when told so in words', async () => {
    const info = await addon.detectEngine({
      host: rig.tcpHost,
      tls: { ca: rig.wrongCa, cert: rig.tls.cert, key: rig.tls.key, insecureSkipVerify: true },
    })
    expect(info.kind).toBe('docker')
  })

  it('follows DOCKER_HOST with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, and tls: true takes the same files', async () => {
    await withEnv({ DOCKER_HOST: rig.tcpHost, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: rig.certPath, DOCKER_CONTEXT: undefined }, async () => {
      expect((await addon.detectEngine()).endpoint).toMatch(/^https:\/\//)
      expect((await addon.detectEngine({ host: rig.tcpHost, tls: true })).local).toBe(false)
    })
  })

  it('reaches the engine through a docker context with TLS material', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ci-ctx-'))
    try {
      const id = createHash('sha256').update('rig').digest('hex')
      mkdirSync(join(dir, 'contexts', 'meta', id), { recursive: true })
      writeFileSync(join(dir, 'contexts', 'meta', id, 'meta.json'),
        JSON.stringify({ Name: 'rig', Metadata: {}, Endpoints: { docker: { Host: rig.tcpHost, SkipTLSVerify: false } } }))
      const tlsDir = join(dir, 'contexts', 'tls', id, 'docker')
      mkdirSync(tlsDir, { recursive: true })
      for (const f of ['ca', 'cert', 'key'] as const) copyFileSync(rig.tls[f], join(tlsDir, `${f}.pem`))
      await withEnv({ DOCKER_CONFIG: dir, DOCKER_HOST: undefined, DOCKER_CONTEXT: 'rig' }, async () => {
        expect((await addon.detectEngine()).endpoint).toMatch(/^https:\/\//)
        expect((await addon.detectEngine({ context: 'rig' })).kind).toBe('docker')
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('goes through the system ssh client, and says what ssh said when it fails', async () => {
    const info = await addon.detectEngine({ host: rig.sshHost, ssh: rig.ssh })
    expect(info.endpoint).toBe(rig.sshHost)
    expect(info.local).toBe(false)
    const unknownKey = await rejection(addon.detectEngine({ host: rig.sshHost, ssh: { keyFile: rig.ssh.keyFile, knownHostsFile: '/dev/null' } }))
    expect(unknownKey.code).toBe('ENGINE_UNAVAILABLE')
    expect(unknownKey.message).toContain('Host key verification failed')
  })

  for (const transport of ['tls', 'ssh'] as const) {
    it(`runs a container and its commands over ${transport}`, async () => {
      const engine = transport === 'tls' ? { host: rig.tcpHost, tls: rig.tls } : { host: rig.sshHost, ssh: rig.ssh }
      const runtime = new addon.DockerRuntime({ engine, image: BUSYBOX, watchdog: false, agent: false })
      const id = await runtime.create({ workingDirectory: '/', mounts: [], command: ['sleep', '600'] })
      try {
        await runtime.start(id)
        const result = await runtime.exec(id, { command: ['sh', '-c', 'echo hello; echo oops >&2; exit 3'] })
        expect(result.stdout).toBe('hello\n')
        expect(result.stderr).toBe('oops\n')
        expect(result.exitCode).toBe(3)
      } finally {
        await runtime.remove(id)
      }
      expect(rig.cli('ps', '-aq')).toBe('')
      // Every connection's ssh child ends with its connection.
      const deadline = Date.now() + 10_000
      while (sshChildren().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
      expect(sshChildren()).toEqual([])
    }, 60_000)
  }
})
