// A host project's view of the installed package: imported by name from node_modules,
// a workspace for a throwaway git repository, one command and one file read in it.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { DockerFileIO, DockerShell, Workspaces, containerAccess, detectEngine } from 'container-isolation'
import type { ShellResult, WorkspaceInfo } from 'container-isolation'

const home = mkdtempSync(join(tmpdir(), 'ci-consumer-'))
const project = join(home, 'project')
const sessionId = `consumer-${process.pid}`
const workspaces = new Workspaces({ baseDir: join(home, 'base'), image: 'container-isolation-test:debian' })

afterAll(async () => {
  await workspaces.destroy(sessionId).catch(() => {})
  rmSync(home, { recursive: true, force: true })
})

function git(...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=consumer', '-c', 'user.email=consumer@localhost', ...args], {
    cwd: project,
    stdio: 'ignore',
  })
}

test('the installed package creates a workspace, runs a command and reads a file', async () => {
  mkdirSync(project)
  writeFileSync(join(project, 'hello.txt'), 'hello from the host\n')
  git('init', '-q')
  git('add', '.')
  git('commit', '-q', '-m', 'hello')

  const info: WorkspaceInfo = await workspaces.create({ projectDir: project, sessionId, lifetime: 'process' })
  expect(info.state).toBe('running')
  const env = await workspaces.environment(sessionId, 'thread-1')
  const shell: DockerShell = env.shell
  const fileIO: DockerFileIO = env.fileIO

  const result: ShellResult = await shell.execute('cat hello.txt && echo written > reply.txt', {
    toolRequestId: 'tool-1',
  })
  expect(result.exitCode).toBe(0)
  expect(result.output.map((line) => line.text)).toEqual(['hello from the host'])
  expect(await fileIO.readFile('reply.txt')).toBe('written\n')
  expect(readFileSync(join(project, 'hello.txt'), 'utf8')).toBe('hello from the host\n')

  // The session agent is the one the platform package installed beside the addon.
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64'
  const platformDir = dirname(createRequire(import.meta.url).resolve(`container-isolation-linux-${arch}-gnu`))
  const shipped = readFileSync(join(platformDir, `container-isolation-agent.linux-${arch}`))
  const digest = createHash('sha256').update(shipped).digest('hex').slice(0, 16)
  expect((await detectEngine()).agent).toContain(digest)
  expect((await containerAccess(info.containerId)).path).toBe('agent')
})
