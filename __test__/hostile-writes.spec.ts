// A host process killed in the middle of a large `writeFile` leaves the target whole (old
// content or new) and nothing else in the directory: not on the host path (the container's
// root reached from the host) and not on the session agent's (the agent sees its stdin
// end). A temporary name left by a process that died is removed by the next write.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, git, IMAGES, suiteRuntime, tempDir } from './helpers'

const MiB = 1 << 20
const SIZE = 300 * MiB
/** The writer is killed once its temporary file holds this much. */
const KILL_AFTER = 48 * MiB
const BLOCK = Buffer.alloc(MiB, 'n')
const OLD = 'old content\n'

const { runtime, cleanup } = suiteRuntime('hostile-writes')
const dirs: Array<{ cleanup: () => void }> = []
afterAll(async () => {
  await cleanup()
  dirs.forEach((d) => d.cleanup())
})

const child = `
const { DockerFileIO } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
const [engine, container, paths] = process.argv.slice(1).map((a) => JSON.parse(a))
const io = new DockerFileIO({ engine, container, ...paths })
const data = Buffer.alloc(${SIZE}, 'n')
console.log('WRITING')
io.writeFile('/workspace/big.bin', data).then(() => console.log('DONE'), (e) => console.log('FAILED ' + e.message))
`

/** Processes of a container (its cgroup names its full id), as this host sees them. */
function processesOf(fullId: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cgroup`, 'utf8').includes(fullId)
      } catch {
        return false
      }
    })
    .map(Number)
}

/**
 * The size of the largest file being written into `dir`'s file system by `pids`: an unnamed
 * one (no links) or one with a temporary name, held open by one of them.
 */
function tempSize(pids: number[], dir: string): number {
  const dev = statSync(dir).dev
  let largest = 0
  for (const pid of pids) {
    let fds: string[] = []
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`)
        const st = statSync(`/proc/${pid}/fd/${fd}`)
        if (st.isFile() && st.dev === dev && (st.nlink === 0 || basename(link).startsWith('.container-isolation'))) {
          largest = Math.max(largest, st.size)
        }
      } catch {}
    }
  }
  return largest
}

/**
 * Runs the writer and SIGKILLs it once the file it writes (on the host, or through the
 * container's agent) has grown to `KILL_AFTER` bytes; how large it was then.
 */
async function killMidWrite(dir: string, id: string, paths: { agent: boolean }): Promise<{ at: number; done: boolean }> {
  const fullId = engineCli('inspect', '-f', '{{.Id}}', id)
  const proc = spawn(process.execPath, ['-e', child, JSON.stringify(engine), JSON.stringify(id), JSON.stringify(paths)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  proc.stdout.on('data', (chunk) => (out += chunk))
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()))
  let at = 0
  let writers: number[] = [proc.pid!]
  for (let i = 0; proc.exitCode === null; i++) {
    if (paths.agent && i % 20 === 0) writers = processesOf(fullId)
    const size = tempSize(writers, dir)
    if (size >= KILL_AFTER) {
      proc.kill('SIGKILL')
      at = size
      break
    }
    await new Promise((r) => setTimeout(r, 2))
  }
  await exited
  return { at, done: out.includes('DONE') }
}

/** The target is the old content or all of the new. */
function whole(file: string): 'old' | 'new' {
  const data = readFileSync(file)
  if (data.toString() === OLD) return 'old'
  expect(data.length).toBe(SIZE)
  for (let i = 0; i < SIZE; i += MiB) expect(data.subarray(i, i + MiB).equals(BLOCK)).toBe(true)
  return 'new'
}

async function project() {
  const d = tempDir('hostile-writes')
  dirs.push(d)
  writeFileSync(join(d.path, 'big.bin'), OLD)
  git(d.path, 'init', '-q', '-b', 'main')
  git(d.path, 'add', '.')
  git(d.path, 'commit', '-q', '-m', 'init')
  const id = await runtime.create({ image: IMAGES.debian, workingDirectory: '/workspace', mounts: [{ source: d.path, target: '/workspace' }] })
  await runtime.start(id)
  return { dir: d.path, id }
}

/** Waits until the directory holds only what it held (an agent may still be abandoning). */
async function settled(dir: string): Promise<string[]> {
  let names: string[] = []
  for (let i = 0; i < 100; i++) {
    names = readdirSync(dir).sort()
    if (names.join() === '.git,big.bin') break
    await new Promise((r) => setTimeout(r, 100))
  }
  return names
}

const PATHS = [
  ['the host path', { hostAccess: true, agent: false }],
  ['the agent path', { hostAccess: false, agent: true }],
] as const

describe('a host process SIGKILLed mid-writeFile (300 MiB) into a bind mount', () => {
  for (const [name, paths] of PATHS) {
    it(`on ${name} leaves the old content or the new, and no other file`, async () => {
      const { dir, id } = await project()
      const { at, done } = await killMidWrite(dir, id, paths)
      console.log(`${name}: killed with ${(at / MiB).toFixed(1)} MiB of ${SIZE / MiB} MiB in the temporary file`)
      expect(done).toBe(false)
      expect(at).toBeGreaterThanOrEqual(KILL_AFTER)
      expect(await settled(dir)).toEqual(['.git', 'big.bin'])
      const content = whole(join(dir, 'big.bin'))
      expect(git(dir, 'status', '--porcelain')).toBe(content === 'old' ? '' : 'M big.bin')

      // The same write, uninterrupted, replaces the file and leaves nothing else either.
      const io = new addon.DockerFileIO({ engine, container: id, ...paths })
      await io.writeFile('/workspace/big.bin', Buffer.alloc(SIZE, 'n'))
      expect(whole(join(dir, 'big.bin'))).toBe('new')
      expect(readdirSync(dir).sort()).toEqual(['.git', 'big.bin'])
    }, 120_000)
  }

  it('a temporary name whose process is gone is removed by the next host write there', async () => {
    const { dir, id } = await project()
    const ns = /pid:\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))![1]
    const startOf = (pid: number | string) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]
    const stale = `.container-isolation-tmp-${ns}-${process.pid}-${Number(startOf('self')) + 1}-00000000000000ff`
    const live = `.container-isolation-tmp-${ns}-${process.pid}-${startOf('self')}-00000000000000ff`
    writeFileSync(join(dir, stale), 'left by a dead writer')
    writeFileSync(join(dir, live), 'a live writer')
    const io = new addon.DockerFileIO({ engine, container: id, hostAccess: true, agent: false })
    await io.writeFile('/workspace/small.txt', 'x')
    expect(readdirSync(dir).sort()).toEqual(['.git', live, 'big.bin', 'small.txt'].sort())
  })
})
