// Checkpoints, restore and fork of a session (issue 38): the clone (HEAD, branch, index,
// work tree with uncommitted and untracked files) and the container's own changes come
// back together; a fork is a session of its own. With the repository bind-mounted and in
// an engine volume (on the remote pass, the volume only: its clone is not on the engine's
// machine).
import { execFileSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addon, engine, engineCli, firstLine, gitProject, IMAGES, isRemote, rejection, tempDir } from './helpers'

const base = tempDir('checkpoint-base')
const dirs: Array<{ cleanup: () => void }> = [base]
const STORAGES = isRemote ? ['volume'] : ['bind', 'volume']
const all = Object.fromEntries(STORAGES.map((storage) => [storage, new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian, storage: storage as 'bind' | 'volume' })]))
let workspaces = all[STORAGES[0]]
afterAll(async () => {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  dirs.forEach((d) => d.cleanup())
})

let n = 0
const sessionId = () => `ckpt${process.pid}x${++n}`

async function session(): Promise<string> {
  const project = gitProject('checkpoint-project', { 'README.md': '# one\n', 'src/a.txt': 'a\n' })
  dirs.push(project)
  const id = sessionId()
  await workspaces.create({ projectDir: project.path, sessionId: id, lifetime: 'process' })
  return id
}

async function run(id: string, command: string): Promise<string> {
  const env = await workspaces.environment(id, 'checkpoint')
  const r = await env.shell.execute(command, { toolRequestId: `c${++n}` })
  const text = r.output.map((l) => l.text).join('\n')
  if (r.exitCode !== 0) throw new Error(`${command}: exit ${r.exitCode}: ${text}`)
  return text
}

/** What `git add -A && git write-tree` gives in a copy of the session's clone, HEAD, branch. */
async function state(id: string): Promise<{ tree: string; head: string; branch: string }> {
  await workspaces.changes(id) // a volume session's repository read back into its clone
  const info = (await workspaces.get(id))!
  const copy = mkdtempSync(join(tmpdir(), 'ckpt-copy-'))
  try {
    cpSync(info.clonePath, copy, { recursive: true, verbatimSymlinks: true })
    const git = (...args: string[]) => execFileSync('git', ['-C', copy, ...args], { encoding: 'utf8' }).trim()
    git('add', '-A')
    return { tree: git('write-tree'), head: git('rev-parse', 'HEAD'), branch: git('symbolic-ref', '-q', '--short', 'HEAD') }
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
}

const PACKAGE = '/usr/local/share/ckpt-package/data.bin'
const INSTALL = `mkdir -p $(dirname ${PACKAGE}) && head -c 300000 /dev/urandom > ${PACKAGE} && sha256sum ${PACKAGE} | cut -d' ' -f1`

describe.each(STORAGES)('checkpoints, restore and fork (%s storage)', (storage) => {
  beforeAll(() => {
    workspaces = all[storage]
  })

  it('restore gives back the tree, HEAD, branch and the installed file byte for byte after the agent wrecked them', async () => {
    const id = await session()
    const sum = await run(id, INSTALL)
    await run(id, "echo b > src/b.txt && git add src/b.txt && git -c user.name=a -c user.email=a@e commit -qm b && echo edit >> README.md && echo new > untracked.txt && git add README.md && echo more >> src/a.txt")
    const before = await state(id)
    const cp = await workspaces.checkpoint(id, { label: 'before the wreck' })
    expect(cp).toMatchObject({ label: 'before the wreck', commit: before.head })
    expect(cp.id).toMatch(/^[0-9a-f]{12}$/)
    expect(cp.bytes).toBeGreaterThanOrEqual(300000) // the file written under /usr
    expect((await workspaces.checkpoints(id)).map((c) => c.id)).toEqual([cp.id])

    await run(id, `rm -rf $(dirname ${PACKAGE}) && git reset -q --hard HEAD~1 && git -c user.name=a -c user.email=a@e commit -q --allow-empty -m other && rm -f untracked.txt && echo junk > junk.txt && git checkout -q -b elsewhere`)
    expect((await state(id)).head).not.toBe(before.head)

    // A port forwarded before the restore (the relay's own proxy port) answers after it.
    const forward = await workspaces.forwardPort(id, 3128)
    expect(await firstLine(forward.hostPort, 'GET / HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.[01] /)
    await workspaces.restore(id, cp.id)
    expect(await firstLine(forward.hostPort, 'GET / HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.[01] /)
    expect(await state(id)).toEqual(before)
    expect(await run(id, `sha256sum ${PACKAGE} | cut -d' ' -f1`)).toBe(sum)
    expect(await run(id, 'cat untracked.txt; test ! -e junk.txt && echo gone')).toBe('new\ngone')
  }, 180_000)

  it('restore puts the clone back after the agent replaced .git by a symlink (to /etc), by a gitfile, or removed it', async () => {
    const id = await session()
    await run(id, 'echo kept > kept.txt')
    const before = await state(id)
    const cp = await workspaces.checkpoint(id)
    for (const damage of ['rm -rf .git && ln -s /etc .git', "rm -rf .git && echo 'gitdir: /etc' > .git", 'rm -rf .git']) {
      await run(id, `${damage} && echo wrecked > kept.txt`)
      await workspaces.restore(id, cp.id)
      expect(await state(id), damage).toEqual(before)
      expect(await run(id, 'cat kept.txt && test -d .git && ! test -L .git && echo dir')).toBe('kept\ndir')
    }
  }, 180_000)

  it('a fork diverges from its parent without either seeing the other\'s writes; destroy takes the checkpoints along', async () => {
    const parent = await session()
    await run(parent, 'echo shared > shared.txt && echo pkg > /usr/local/share/marker')
    const cp = await workspaces.checkpoint(parent)
    const child = `${parent}f`
    const info = await workspaces.fork(parent, { sessionId: child, checkpoint: cp.id })
    expect(info.sessionId).toBe(child)
    expect(await run(child, 'cat shared.txt /usr/local/share/marker')).toBe('shared\npkg')
    await run(child, 'echo child > child.txt && echo c > /usr/local/share/child-only')
    await run(parent, 'echo parent > parent.txt && echo p > /usr/local/share/parent-only')
    expect(await run(parent, 'ls child.txt /usr/local/share/child-only 2>&1 | wc -l; test -e child.txt || echo no')).toContain('no')
    expect(await run(child, 'test -e parent.txt || echo no; test -e /usr/local/share/parent-only || echo none')).toBe('no\nnone')
    const forkNow = await workspaces.fork(child, { sessionId: `${parent}g` })
    expect(await run(forkNow.sessionId, 'cat child.txt')).toBe('child')

    const err = await rejection(workspaces.fork(parent, { sessionId: child }))
    expect(err.code).toBe('EEXIST')
    expect((await rejection(workspaces.restore(parent, 'ffffffffffff'))).code).toBe('ENOENT')

    const ids = [forkNow.sessionId, child, parent]
    for (const id of ids) await workspaces.destroy(id)
    for (const id of ids) expect(engineCli('images', '-q', '--filter', `label=dev.container-isolation.session=${id}`), id).toBe('')
  }, 180_000)
})

describe('checkpoints kept', () => {
  it('keeps the newest maxCheckpoints, dropping the oldest with its image; 0 is refused', async () => {
    expect(() => new addon.Workspaces({ baseDir: base.path, engine, maxCheckpoints: 0 })).toThrow(/maxCheckpoints/)
    const two = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian, maxCheckpoints: 2 })
    const project = gitProject('checkpoint-project', { 'README.md': '# kept\n' })
    dirs.push(project)
    const id = sessionId()
    await two.create({ projectDir: project.path, sessionId: id, lifetime: 'process' })
    const made = []
    for (const label of ['one', 'two', 'three']) made.push(await two.checkpoint(id, { label }))
    expect((await two.checkpoints(id)).map((c) => c.label)).toEqual(['two', 'three'])
    expect(engineCli('images', '-q', '--filter', `label=dev.container-isolation.checkpoint=${made[0].id}`)).toBe('')
    expect(await two.deleteCheckpoint(id, made[1].id)).toBe(true)
    expect(await two.deleteCheckpoint(id, made[1].id)).toBe(false)
    expect((await two.checkpoints(id)).map((c) => c.label)).toEqual(['three'])
    await two.destroy(id)
  }, 120_000)
})
