import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, IMAGES, suiteRuntime } from './helpers'

const suite = suiteRuntime('lifecycle')
afterAll(suite.cleanup)
const baseDir = suite.baseDir

const docker = engineCli
const exists = (name: string) => docker('ps', '-aq', '--filter', `name=^${name}$`) !== ''

async function startOwner(watchdog = false): Promise<{ child: ChildProcess; proc: string; session: string }> {
  const child = spawn(process.execPath, [join(__dirname, 'fixtures', 'owner.cjs'), baseDir, watchdog ? 'watchdog' : ''], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk) => {
      out += chunk
      if (out.includes('\n')) resolve(out.split('\n')[0])
    })
    child.on('exit', (code) => reject(new Error(`owner exited early with ${code}`)))
  })
  return { child, ...JSON.parse(line) }
}

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )

describe('owner death', () => {
  it('SIGKILL: a later reapOrphans removes the process container only', async () => {
    const { child, proc, session } = await startOwner()
    const foreign = docker('create', '--label', 'dev.container-isolation.managed=true', IMAGES.debian, 'true')
    const otherBase = suiteRuntime('lifecycle-other')
    const theirs = await otherBase.runtime.create({ workingDirectory: '/', mounts: [], lifetime: 'process' })
    try {
      child.kill('SIGKILL')
      await exited(child)
      expect(exists(proc)).toBe(true) // nothing ran at death
      const dry = await addon.reapOrphans({ baseDir, engine, dryRun: true })
      expect(dry.containersRemoved).toEqual([proc])
      expect(exists(proc)).toBe(true)
      const report = await addon.reapOrphans({ baseDir, engine })
      expect(report.containersRemoved).toEqual([proc])
      expect(report.kept).toContain(session)
      expect(exists(proc)).toBe(false)
      expect(exists(session)).toBe(true)
      expect(docker('ps', '-aq', '--no-trunc', '--filter', `id=${foreign}`)).toBe(foreign)
      expect(exists(theirs)).toBe(true) // another base directory: never touched
      expect((await addon.reapOrphans({ baseDir, engine })).containersRemoved).toEqual([]) // idempotent
    } finally {
      docker('rm', '-f', foreign)
      await otherBase.cleanup()
    }
  })

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal}: the process container is gone before the owner exits, by the signal`, async () => {
      const { child, proc, session } = await startOwner()
      child.kill(signal)
      const result = await exited(child)
      expect(result.signal).toBe(signal)
      expect(exists(proc)).toBe(false)
      expect(exists(session)).toBe(true)
    })
  }

  it('watchdog: after SIGKILL the process container is gone within 10 s with no further call', async () => {
    const { child, proc, session } = await startOwner(true)
    child.kill('SIGKILL')
    await exited(child)
    const killedAt = Date.now()
    while (exists(proc) && Date.now() - killedAt < 10_000) await new Promise((r) => setTimeout(r, 200))
    expect(exists(proc)).toBe(false)
    expect(Date.now() - killedAt).toBeLessThan(10_000)
    expect(exists(session)).toBe(true)
  })
})

describe('reapOrphans with active sessions', () => {
  it('removes session containers not listed, keeps listed ones, and is safe to run concurrently', async () => {
    const { runtime } = suite
    const a = await runtime.create({ id: 'active-a', workingDirectory: '/', mounts: [] })
    const b = await runtime.create({ id: 'stale-b', workingDirectory: '/', mounts: [] })
    const reports = await Promise.all([
      addon.reapOrphans({ baseDir, engine, activeSessionIds: ['active-a'] }),
      addon.reapOrphans({ baseDir, engine, activeSessionIds: ['active-a'] }),
    ])
    const removed = reports.flatMap((r) => r.containersRemoved)
    expect(removed.filter((n) => n === b)).toHaveLength(1)
    expect(removed).not.toContain(a)
    expect(exists(a)).toBe(true)
    expect(exists(b)).toBe(false)
  })
})
