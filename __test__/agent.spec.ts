import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, eventually, IMAGES, suiteRuntime, tempDir } from './helpers'

// What the session agent adds: exact kills, one exit story, atomic writes, tmpfs, long-lived
// bidirectional execs, bounded output, the engine path where the agent is switched off, and
// an agent chosen by the container's architecture.
const { runtime, baseDir, cleanup } = suiteRuntime('agent')
const logs = tempDir('agent-logs')
const byCli: string[] = []
const images: string[] = []
afterAll(async () => {
  await cleanup()
  for (const id of byCli) engineCli('rm', '-f', '-v', id)
  for (const image of images) engineCli('rmi', image)
  logs.cleanup()
})

let requests = 0
const req = () => `agent-req-${++requests}`

async function container(image: string = IMAGES.debian) {
  const id = await runtime.create({ image, workingDirectory: '/tmp', mounts: [] })
  await runtime.start(id)
  return id
}

/** Every process in the container but its init, keep-alive and our agent. */
/** Live processes other than the container's own: a zombie (state Z) has ended already and
 * waits only for its parent to read its status, so it is no process that got away. */
async function strays(id: string) {
  const out = await runtime.exec(id, { command: ['ps', '-eo', 'stat=,args='], user: '0' })
  return out.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('Z'))
    .map((l) => l.replace(/^\S+\s+/, ''))
    .filter((l) => !/docker-init|sleep 86400|while :|container-isolation-agent|^ps -eo/.test(l))
}

describe('the session agent kills what a command started', () => {
  let id = ''
  beforeAll(async () => {
    id = await container()
  })
  const shell = (extra = {}) =>
    new addon.DockerShell({ container: id, cwd: '/tmp', threadId: 'agent', logDir: logs.path, engine, ...extra })

  for (const [name, script] of [
    ['setsid with a cleared environment', 'setsid env -i sleep 1000 & sleep 1001'],
    ['a session leader that execs with a cleared environment', "setsid bash -c 'exec -c sleep 1002' & sleep 1003"],
    ['a fork loop', 'while :; do sleep 1004 & done'],
    ['a SIGTERM trap in a grandchild', "bash -c \"trap '' TERM; sleep 1005\" & trap '' TERM; sleep 1006"],
  ] as const) {
    it(`terminate(): ${name}`, async () => {
      const sh = shell()
      const r = await sh.execute(script, { toolRequestId: req(), onStart: () => setTimeout(() => sh.terminate(), 400) })
      expect(r.signal).toMatch(/^SIG(TERM|KILL)$/)
      expect(r.exitCode).toBe(r.signal === 'SIGKILL' ? 137 : 143)
      expect(await strays(id)).toEqual([])
    })
  }

  it('timeoutMs: setsid with a cleared environment leaves nothing', async () => {
    const r = await shell({ timeoutMs: 400 }).execute('setsid env -i sleep 1010 & sleep 1011', { toolRequestId: req() })
    expect(r.exitCode).not.toBe(0)
    expect(await strays(id)).toEqual([])
  })

  it('exec timeouts kill setsid descendants too', async () => {
    const err = await runtime
      .exec(id, { command: ['sh', '-c', 'setsid env -i sleep 1012 & sleep 1013'], timeout: 400 })
      .catch((e) => e)
    expect(err.code).toBe('TIMEOUT')
    expect(await strays(id)).toEqual([])
  })

  it('keeps the last lines of a long output within the limits; the log has them all', async () => {
    const r = await shell({ maxOutputLines: 1000 }).execute('seq 1 200000', { toolRequestId: req() })
    expect(r.output).toHaveLength(1000)
    expect(r.output.at(-1)?.text).toBe('200000')
    expect(r.omittedLines).toBe(199_000)
    const { readFileSync } = await import('node:fs')
    expect(readFileSync(r.logFilePath!, 'utf8')).toContain('\n1\n')
  })
})

describe('DockerFileIO through the agent', () => {
  let id = ''
  beforeAll(async () => {
    id = `ci-agent-tmpfs-${process.pid}`
    engineCli('run', '-d', '--name', id, '--tmpfs', '/scratch', IMAGES.debian, 'sleep', '3600')
    byCli.push(id)
  })

  it('sees tmpfs mounts, which the archive endpoints cannot', async () => {
    const io = new addon.DockerFileIO({ engine, container: id, hostAccess: false })
    await io.writeFile('/scratch/t.txt', 'on tmpfs')
    expect(await io.readFile('/scratch/t.txt')).toBe('on tmpfs')
    expect(engineCli('exec', id, 'cat', '/scratch/t.txt')).toBe('on tmpfs')
    expect(await io.readdir('/scratch')).toEqual(['t.txt'])
  })

  it('an interrupted write leaves the old content and no temporary file', async () => {
    const io = new addon.DockerFileIO({ engine, container: id, hostAccess: false })
    await io.writeFile('/tmp/big.bin', 'old')
    const big = Buffer.alloc(64 << 20, 0x61)
    const writing = io.writeFile('/tmp/big.bin', big).then(
      () => 'written',
      (e) => e.code,
    )
    // Kill the agent mid-write (as a container that stops would).
    await new Promise((r) => setTimeout(r, 30))
    engineCli('exec', id, 'pkill', '-KILL', '-f', 'container-isolation-agent')
    const outcome = await writing
    const now = (await io.readBinaryFile('/tmp/big.bin')).toString('latin1')
    expect(now === 'old' || (outcome === 'written' && now.length === big.length)).toBe(true)
    expect((await io.readdir('/tmp')).filter((n) => n !== 'big.bin' && n.includes('big'))).toEqual([])
  })
})

describe('DockerRuntime.execStream', () => {
  let id = ''
  beforeAll(async () => {
    id = await container()
  })

  for (const agent of [true, false]) {
    const label = agent ? 'agent' : 'engine exec'
    it(`drives a JSON-RPC echo over stdin/stdout (${label})`, async () => {
      const rt = new addon.DockerRuntime({ engine, agent })
      const echo = 's/.*"id":([0-9]+).*/{"jsonrpc":"2.0","id":\\1,"result":"ok"}/'
      const h = await rt.execStream(id, { command: ['sed', '-u', '-E', echo] })
      const replies: string[] = []
      let buffered = ''
      h.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString()
        const lines = buffered.split('\n')
        buffered = lines.pop()!
        replies.push(...lines)
      })
      for (let i = 1; i <= 20; i++) h.stdin.write(`{"jsonrpc":"2.0","id":${i},"method":"ping"}\n`)
      h.stdin.end()
      expect(await h.wait()).toMatchObject({ exitCode: 0 })
      expect(replies.map((r) => JSON.parse(r).id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    })

    it(`kill() ends the command and every process it started (${label})`, async () => {
      const rt = new addon.DockerRuntime({ engine, agent })
      const h = await rt.execStream(id, { command: ['bash', '-c', 'sleep 1020 & exec sleep 1021'] })
      // Killed once both of its processes run, so that "no strays" has something to find.
      await eventually('both sleeps running', async () => (await strays(id)).filter((l) => /^sleep 102[01]$/.test(l)).length === 2)
      h.kill('SIGKILL')
      const exit = await h.wait()
      expect(exit.exitCode).toBe(137)
      await eventually('no process of the command left', async () => (await strays(id)).length === 0, 5000)
    })
  }

  it("environmentMode 'replace' gives only the given environment", async () => {
    const h = await runtime.execStream(id, { command: ['/usr/bin/env'], environment: { ONLY: 'this' }, environmentMode: 'replace' })
    let out = ''
    h.stdout.on('data', (c: Buffer) => (out += c))
    await h.wait()
    expect(out).toBe('ONLY=this\n')
  })
})

// The agent follows the container's architecture (its image's), not the engine's. Only this
// machine's architecture can run here, so the other one is an image whose config says the
// other architecture while its programs are this machine's (busybox): it runs, and shows the
// choice is made by what the container is said to be.
describe("the agent for the container's architecture", () => {
  const ARCH = { x64: { platform: 'linux/amd64', machine: 62, elf: 'x86-64' }, arm64: { platform: 'linux/arm64', machine: 183, elf: 'aarch64' } }
  const own = process.arch === 'arm64' ? 'arm64' : 'x64'
  const other = own === 'x64' ? 'arm64' : 'x64'
  const agentName = (arch: string) => `container-isolation-agent.linux-${arch}`
  const HOST = fileURLToPath(new URL('./fixtures/agent-arch-host.cjs', import.meta.url))
  const REAL_AGENT = fileURLToPath(new URL(`../${agentName(own)}`, import.meta.url))
  const dirs = tempDir('agent-arch')
  let otherImage = ''
  let ownByCli = ''
  let otherByCli = ''
  afterAll(() => dirs.cleanup())

  /** A 64-byte ELF64 little-endian header for `machine`: a stand-in agent that cannot run. */
  const standin = (machine: number) => {
    const header = Buffer.alloc(64)
    Buffer.from('\x7fELF', 'latin1').copy(header)
    header.set([2, 1, 1], 4)
    header.writeUInt16LE(3, 16)
    header.writeUInt16LE(machine, 18)
    return header
  }

  /** A directory under `dirs` holding `files` (name to content, or a path to copy). */
  const agentDir = (name: string, files: Record<string, Buffer | string>) => {
    const dir = join(dirs.path, name)
    mkdirSync(dir, { recursive: true })
    for (const [file, content] of Object.entries(files)) {
      if (typeof content === 'string') copyFileSync(content, join(dir, file))
      else writeFileSync(join(dir, file), content)
    }
    return dir
  }

  /** Runs the fixture host with CONTAINER_ISOLATION_AGENT=`agent`; its report. */
  const hostWith = (agent: string, createFrom: string[], given: string[]) => {
    const args = [HOST, engine.socketPath, baseDir, createFrom.join(','), given.join(',')]
    const env = { ...process.env, CONTAINER_ISOLATION_AGENT: agent }
    let out = ''
    try {
      out = execFileSync(process.execPath, args, { env, encoding: 'utf8' })
    } catch (e) {
      throw new Error(`the host failed: ${(e as { stdout?: string }).stdout}`)
    }
    const report = JSON.parse(out.trim().split('\n').at(-1)!)
    console.log(`CONTAINER_ISOLATION_AGENT=${agent}:`, JSON.stringify(report, null, 1))
    return report
  }

  beforeAll(() => {
    otherImage = `ci-agent-${other}-labelled:${process.pid}`
    const context = agentDir('image', {})
    const source = engineCli('create', IMAGES.busybox)
    try {
      engineCli('export', '-o', join(context, 'rootfs.tar'), source)
    } finally {
      engineCli('rm', source)
    }
    writeFileSync(join(context, 'Dockerfile'), 'FROM scratch\nADD rootfs.tar /\nCMD ["/bin/sh"]\n')
    engineCli('build', '-q', '--platform', ARCH[other].platform, '-t', otherImage, context)
    images.push(otherImage)
    ownByCli = `ci-agent-arch-own-${process.pid}`
    otherByCli = `ci-agent-arch-other-${process.pid}`
    engineCli('run', '-d', '--init', '--name', ownByCli, IMAGES.busybox, 'sleep', '3600')
    byCli.push(ownByCli)
    engineCli('run', '-d', '--init', '--name', otherByCli, otherImage, 'sleep', '3600')
    byCli.push(otherByCli)
  })

  it("a container of this machine's architecture gets the agent, mounted or uploaded", async () => {
    const mounted = await container(IMAGES.busybox)
    const access = [await addon.containerAccess(mounted, engine), await addon.containerAccess(ownByCli, engine)]
    console.log(JSON.stringify(access))
    expect(access.map((a) => a.path)).toEqual(['agent', 'agent'])
    expect(access[0].agentPath).toBe('/.container-isolation-agent')
    expect(access[1].agentPath).toMatch(/\/\.container-isolation-agent-[0-9a-f]{16}$/)
  })

  it("an image of the other architecture takes the engine path, saying that architecture's agent is absent", () => {
    const dir = agentDir('own-only', { [agentName(own)]: REAL_AGENT })
    const report = hostWith(dir, [IMAGES.busybox, otherImage], [otherByCli])
    const why = `no session agent for ${ARCH[other].platform} in ${dir} (${agentName(other)} absent)`
    expect(report.created[IMAGES.busybox].path).toBe('agent')
    expect(report.created[otherImage]).toMatchObject({ path: 'engine', reason: why })
    expect(report.given[otherByCli]).toMatchObject({ path: 'engine', reason: why })
  })

  it("this machine's executable under the other architecture's name is refused by its ELF header", () => {
    const dir = agentDir('mislabelled', { [agentName(own)]: REAL_AGENT, [agentName(other)]: REAL_AGENT })
    const report = hostWith(dir, [otherImage], [])
    const why = `no session agent for ${ARCH[other].platform} in ${dir} (${agentName(other)} is an ${ARCH[own].elf} executable, not ${ARCH[other].elf})`
    expect(report.created[otherImage]).toMatchObject({ path: 'engine', reason: why })
    expect(report.relayed).toMatchObject({ code: 'EGRESS_UNAVAILABLE' })
    expect(report.relayed.message).toContain(`(${why})`)
  })

  it("CONTAINER_ISOLATION_AGENT naming a directory or a file without this architecture's agent: the engine path, saying why", () => {
    const dir = agentDir('other-only', { [agentName(other)]: standin(ARCH[other].machine) })
    const byDir = hostWith(dir, [IMAGES.busybox], [ownByCli])
    const why = `no session agent for ${ARCH[own].platform} in ${dir} (${agentName(own)} absent)`
    expect(byDir.created[IMAGES.busybox]).toMatchObject({ path: 'engine', reason: why })
    expect(byDir.given[ownByCli]).toMatchObject({ path: 'engine', reason: why })

    const file = join(dir, agentName(other))
    const byFile = hostWith(file, [IMAGES.busybox], [])
    expect(byFile.created[IMAGES.busybox]).toMatchObject({
      path: 'engine',
      reason: `no session agent for ${ARCH[own].platform}: CONTAINER_ISOLATION_AGENT=${file} is an ${ARCH[other].elf} executable, not ${ARCH[own].elf}`,
    })
    expect(byFile.relayed).toMatchObject({ code: 'EGRESS_UNAVAILABLE' })
  })
})
