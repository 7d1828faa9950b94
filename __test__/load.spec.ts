import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, IMAGES, tempDir } from './helpers'

const base = tempDir('load-base')
const proj = tempDir('load-project')
afterAll(() => {
  base.cleanup()
  proj.cleanup()
})

describe('load', () => {
  it('16 workspaces created, used and destroyed concurrently: all succeed, nothing left over', async () => {
    writeFileSync(join(proj.path, 'README.md'), '# load\n')
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: proj.path })
    execFileSync('git', ['add', '.'], { cwd: proj.path })
    execFileSync('git', ['-c', 'user.name=L', '-c', 'user.email=l@l', 'commit', '-qm', 'init'], { cwd: proj.path })
    const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
    const ids = Array.from({ length: 16 }, (_, i) => `load${i}`)
    const rssBefore = process.memoryUsage().rss
    let peakRss = rssBefore
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20)
    const started = Date.now()
    const results = await Promise.all(
      ids.map(async (id) => {
        const info = await workspaces.create({ projectDir: proj.path, sessionId: id })
        const env = await workspaces.environment(id, 't')
        await env.fileIO.writeFile('mine.txt', `${id}\n`)
        const read = await env.fileIO.readFile('mine.txt')
        const run = await env.shell.execute('cat mine.txt README.md', { toolRequestId: 'load' })
        await workspaces.destroy(id)
        return { info, read, out: run.output.map((l) => l.text) }
      }),
    )
    const wall = Date.now() - started
    clearInterval(sampler)
    for (const [i, r] of results.entries()) {
      expect(r.read).toBe(`${ids[i]}\n`)
      expect(r.out).toEqual([ids[i], '# load'])
    }
    const left = engineCli('ps', '-aq', '--filter', `label=dev.container-isolation.base-dir=${base.path}`)
    expect(left.trim()).toBe('')
    expect(readdirSync(join(base.path, 'sessions')).filter((d) => !d.startsWith('.'))).toEqual([])
    const trashed = readdirSync(join(base.path, '.trash')).flatMap((d) => readdirSync(join(base.path, '.trash', d)))
    expect(trashed.sort()).toEqual(ids.map((id) => `session-${id}`).sort())
    for (const r of results) expect(existsSync(r.info.clonePath)).toBe(false)
    console.log(
      `[load] 16 workspaces end to end: wall ${wall} ms, peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MiB (+${((peakRss - rssBefore) / 2 ** 20).toFixed(0)} MiB)`,
    )
  })
})
