import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { addon, git, IMAGES, tempDir } from './helpers'

const home = tempDir('cli-home')
const proj = tempDir('cli-project')
const dirs = [home, proj]
afterAll(() => {
  spawnSync(process.execPath, [cliPath, 'reap', '--active', ''], { env: cliEnv })
  dirs.forEach((d) => d.cleanup())
})

const cliPath = join(__dirname, '..', 'bin', 'container-isolation.js')
const cliEnv = { ...process.env, CONTAINER_ISOLATION_HOME: home.path, CONTAINER_ISOLATION_IMAGE: IMAGES.debian }
const cli = (...args: string[]) => {
  const r = spawnSync(process.execPath, [cliPath, ...args], { env: cliEnv, encoding: 'utf8' })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

describe('container-isolation CLI', () => {
  it('doctor lists the engines with versions and latency', () => {
    const r = cli('doctor', '--json')
    expect(r.code).toBe(0)
    const docker = JSON.parse(r.out).find((e: { kind: string }) => e.kind === 'docker')
    expect(docker).toMatchObject({ endpoint: 'unix:///var/run/docker.sock' })
    expect(docker.latencyMs).toBeGreaterThan(0)
    expect(docker.local).toBe(true)
    expect(cli('doctor').out).toMatch(/^KIND\s+VERSION\s+API\s+ENDPOINT\s+LOCAL\s+LATENCY/)
  })

  it('doctor --host names one engine; misplaced engine options are refused', () => {
    const one = cli('doctor', '--host', 'unix:///var/run/docker.sock', '--json')
    expect(one.code, one.err).toBe(0)
    expect(JSON.parse(one.out)).toMatchObject([{ endpoint: 'unix:///var/run/docker.sock', local: true }])
    const tlsAlone = cli('doctor', '--tls', '--json')
    expect(tlsAlone.code).toBe(1)
    expect(JSON.parse(tlsAlone.out)[0].code).toBe('INVALID_ARGUMENT')
    expect(cli('doctor', '--host', 'tcp://127.0.0.1:9', '--context', 'x').code).toBe(2)
  })

  it('up --egress: a policy as JSON, a malformed one refused with its code, a bad word a usage error', () => {
    const session = `egress${process.pid}`
    const own = tempDir('cli-egress-project')
    dirs.push(own)
    const up = cli('up', own.path, '--session', session, '--egress', '{"allow":["internet.test"]}', '--json')
    expect(up.code, up.err).toBe(0)
    const env = cli('exec', session, '--', 'sh', '-c', 'echo $HTTPS_PROXY')
    expect(env.out.trim()).toBe('http://127.0.0.1:3128')
    const bad = cli('up', own.path, '--session', `${session}b`, '--egress', '{"allow":["a*.com"]}')
    expect(bad.code).toBe(1)
    expect(bad.err).toContain('INVALID_ARGUMENT')
    expect(cli('up', own.path, '--egress', 'nope').code).toBe(2)
    expect(cli('down', session).code).toBe(0)
  })

  it('up, exec, ls, reap --dry-run, down — with exit codes a script can use', () => {
    writeFileSync(join(proj.path, 'hello.txt'), 'hello\n')
    const up = cli('up', proj.path, '--json')
    expect(up.code, up.err).toBe(0)
    const info = JSON.parse(up.out)
    expect(info.sessionId).toBe(addon.computeContainerName(proj.path))
    expect(info.state).toBe('running')
    expect(cli('up', proj.path, '--session', 'second', '--json').code).toBe(0)

    const status = cli('exec', info.sessionId, '--', 'git', 'status')
    expect(status.code).toBe(0)
    expect(status.out).toContain(`On branch session-${info.sessionId}`)
    const failing = cli('exec', info.sessionId, '--', 'sh', '-c', 'echo oops >&2; exit 7')
    expect(failing.code).toBe(7)
    expect(failing.err).toContain('oops')
    // A command ended by signal N exits 128+N, as a shell reports it.
    expect(cli('exec', info.sessionId, '--', 'sh', '-c', 'kill -KILL $$').code).toBe(137)
    expect(cli('exec', info.sessionId, '--', 'sh', '-c', 'kill -INT $$').code).toBe(130)
    expect(cli('exec', info.sessionId, '--', 'cat', 'hello.txt').out).toBe('hello\n')
    const access = cli('doctor', '--container', info.containerId)
    expect(access.code, access.err).toBe(0)
    expect(access.out).toContain(`${info.containerId}: session agent`)

    const ls = cli('ls', '--json')
    expect(ls.code).toBe(0)
    const listed = JSON.parse(ls.out)
    expect(listed.map((s: { sessionId: string }) => s.sessionId).sort()).toEqual([info.sessionId, 'second'].sort())
    expect(listed[0]).toHaveProperty('ownerAlive', false) // the `up` process has exited
    expect(cli('ls').out).toMatch(/^SESSION\s+STATE\s+BRANCH\s+CLONE\s+AGE\s+CHECKPOINTS\s+OWNER/)

    // Undo from the terminal: a checkpoint, the work lost, the checkpoint restored, a fork.
    cli('exec', 'second', '--', 'sh', '-c', 'echo saved > saved.txt')
    const made = cli('checkpoint', 'second', '--label', 'saved', '--json')
    expect(made.code, made.err).toBe(0)
    const checkpoint = JSON.parse(made.out).id
    expect(cli('checkpoints', 'second').out).toMatch(new RegExp(`^ID\\s+AGE\\s+COMMIT\\s+BRANCH\\s+LABEL\\n${checkpoint}`))
    cli('exec', 'second', '--', 'rm', 'saved.txt')
    expect(cli('restore', 'second', checkpoint).code).toBe(0)
    expect(cli('exec', 'second', '--', 'cat', 'saved.txt').out).toBe('saved\n')
    const forked = cli('fork', 'second', '--session', 'third', '--checkpoint', checkpoint)
    expect(forked.code, forked.err).toBe(0)
    expect(cli('exec', 'third', '--', 'cat', 'saved.txt').out).toBe('saved\n')
    expect(JSON.parse(cli('ls', '--json').out).find((s: { sessionId: string }) => s.sessionId === 'second').checkpoints).toBe(1)
    expect(cli('down', 'third').code).toBe(0)

    const dry = cli('reap', '--dry-run', '--json')
    expect(dry.code).toBe(0)
    expect(JSON.parse(dry.out)).toEqual({ containersRemoved: [], clonesTrashed: [], kept: expect.any(Array), volumesRemoved: [] })

    expect(cli('down', 'second').code).toBe(0)
    expect(cli('down', info.sessionId).code).toBe(0)
    const again = cli('down', info.sessionId)
    expect(again.code).toBe(1)
    expect(again.err).toContain('CONTAINER_NOT_FOUND')
  })

  it('up --trust grants what devcontainer.json asks beyond the session; without it the config is refused', () => {
    const traced = tempDir('cli-trust')
    writeFileSync(join(traced.path, '.devcontainer.json'), `{ "image": "${IMAGES.debian}", "capAdd": ["SYS_PTRACE"] }`)
    try {
      const refused = cli('up', traced.path, '--session', 'untrusted')
      expect(refused.code).toBe(1)
      expect(refused.err).toContain('DEVCONTAINER')
      expect(refused.err).toContain('trust.capabilities: ["SYS_PTRACE"]')
      const up = cli('up', traced.path, '--session', 'trusted', '--trust', '{"capabilities":["SYS_PTRACE"]}')
      expect(up.code, up.err).toBe(0)
      expect(cli('up', traced.path, '--trust', '{nope').code).toBe(2)
      expect(cli('down', 'trusted').code).toBe(0)
    } finally {
      traced.cleanup()
    }
  })

  it('log, diff, export, push and up --repo: review a session, bring it home, send it out', () => {
    const own = tempDir('cli-review')
    const remote = tempDir('cli-remote')
    dirs.push(own, remote)
    git(own.path, 'init', '-q', '-b', 'main')
    writeFileSync(join(own.path, 'a.txt'), 'a\n')
    git(own.path, 'add', '.')
    git(own.path, 'commit', '-q', '-m', 'init')
    git(remote.path, 'init', '-q', '--bare', 'out.git')
    const bare = join(remote.path, 'out.git')
    const s = `review${process.pid}`
    expect(cli('up', own.path, '--session', s).code).toBe(0)
    const work = cli('exec', s, '--', 'sh', '-c', 'git config user.name A; git config user.email a@e; echo x > x.txt; git add x.txt; git commit -qm "add x"; echo wip > wip.txt')
    expect(work.code, work.err).toBe(0)
    const log = JSON.parse(cli('log', s, '--json').out)
    expect(log.commits.map((c: { summary: string }) => c.summary)).toEqual(['add x'])
    const stat = cli('diff', s, '--stat').out
    expect(stat).toMatch(/added\s+\+1 -0\s+x\.txt/)
    expect(stat).toContain('?? wip.txt')
    // The whole diff: the commits', then the uncommitted work's.
    const diff = cli('diff', s)
    expect(diff.out).toMatch(/\+\+\+ b\/x\.txt\n@@ -0,0 \+1 @@\n\+x\n[\s\S]*\+\+\+ b\/wip\.txt\n@@ -0,0 \+1 @@\n\+wip\n$/)
    expect(diff.err).toContain('(uncommitted work, in no commit yet:)')

    const exported = cli('export', s, '--uncommitted')
    expect(exported.code, exported.err).toBe(0)
    expect(exported.out).toContain(`merge:   git -C ${own.path} merge session/${s}`)
    expect(git(own.path, 'show', `session/${s}:wip.txt`)).toBe('wip')
    const again = cli('export', s)
    expect(again.code).toBe(1)
    expect(again.err).toContain('EEXIST')
    expect(cli('export', s, '--force', '--branch', 'mine', '--json').code).toBe(0)

    const pushed = JSON.parse(cli('push', s, '--url', bare, '--branch', 'out', '--json').out)
    expect(git(bare, 'rev-parse', 'out')).toBe(pushed.commit)
    expect(cli('push', s).code).toBe(2)
    const clear = spawnSync(process.execPath, [cliPath, 'push', s, '--url', 'http://git.example.invalid/r.git'], { env: { ...cliEnv, CONTAINER_ISOLATION_GIT_TOKEN: 'tok' }, encoding: 'utf8' })
    expect(clear.status).toBe(1)
    expect(clear.stderr).toContain('INVALID_ARGUMENT')
    expect(clear.stderr).not.toContain('tok')

    const fromRepo = JSON.parse(cli('up', '--repo', `file://${bare}`, '--ref', 'out', '--session', `${s}r`, '--json').out)
    expect(fromRepo.repositoryUrl).toBe(`file://${bare}`)
    expect(fromRepo.baseCommit).toBe(pushed.commit)
    expect(cli('up', '--repo', `file://${bare}`).code).toBe(2)
    expect(cli('down', `${s}r`).code).toBe(0)
    expect(cli('down', s).code).toBe(0)
  })

  it('usage errors exit 2', () => {
    expect(cli('bogus').code).toBe(2)
    expect(cli('exec', 'x').code).toBe(2)
    expect(cli('up').code).toBe(2)
    expect(cli('--help').code).toBe(0)
  })
})
