// `container-isolation mcp` at the doors through which work leaves: the tools' annotations
// follow how the server was started, `session_export` writes only under the export prefix
// and moves an existing branch only when the person starting the server allowed it (or the
// user says yes when asked), and a project folder that is not a git repository stays
// byte-for-byte the same through a whole session. Driven by the SDK's own client.
import { realpathSync } from 'node:fs'
import { join } from 'node:path'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, describe, expect, it } from 'vitest'
import { folderManifest, git, gitProject, IMAGES, plainFolder } from './helpers'
import { closeAndTime, closeServers, containersOf, dirs, type Server, startServer, text } from './mcp-harness'

const project = gitProject('mcp-exits-project', { 'a.txt': 'a\n' })
dirs.push(project)
afterAll(closeServers)

describe('container-isolation mcp annotations follow the server', () => {
  it('run_command is not open-world with --egress none; session_export is destructive where force can be used; session_close is not with --keep', async () => {
    const annotationsOf = async (server: Server) => Object.fromEntries((await server.client.listTools()).tools.map((t) => [t.name, t.annotations]))
    const closed = await annotationsOf(await startServer(project.path, ['--image', IMAGES.debian, '--egress', 'none', '--allow-force-export', '--keep']))
    expect(closed.run_command).toMatchObject({ openWorldHint: false, destructiveHint: true })
    expect(closed.session_export).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false })
    expect(closed.session_close).toMatchObject({ destructiveHint: false })
    // A client that can ask the user: force can be used (asked each time).
    const asking = await annotationsOf(await startServer(project.path, ['--image', IMAGES.debian], { elicitation: { form: {} } }))
    expect(asking.session_export).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false })
    expect(asking.run_command).toMatchObject({ openWorldHint: true })
  })
})

describe('container-isolation mcp exports only where the person starting it allows', () => {
  /** A git project with branches of the user's own, and their commit. */
  function userProject(name: string, branches: string[]) {
    const proj = gitProject(name, { 'a.txt': 'a\n' })
    dirs.push(proj)
    for (const b of branches) git(proj.path, 'branch', b)
    return { path: proj.path, tip: git(proj.path, 'rev-parse', 'main') }
  }
  const unmoved = (proj: { path: string; tip: string }, branches: string[]) => {
    for (const b of branches) expect(git(proj.path, 'rev-parse', b), b).toBe(proj.tip)
  }

  it('a branch outside session/, or force without permission, is refused before anything is made or written; the default session/<id> works', async () => {
    const branches = ['main', 'feature', 'session/mine']
    const proj = userProject('mcp-exports', ['feature', 'session/mine'])
    const server = await startServer(proj.path, ['--image', IMAGES.debian])
    for (const args of [{ branch: 'feature' }, { branch: 'feature', force: true }, { branch: 'main' }, { branch: 'session/' }]) {
      const r = await server.call('session_export', args)
      expect(text(r), JSON.stringify(args)).toMatch(/^INVALID_ARGUMENT: branch '[^']*' is outside session\/: this server exports only to branches under session\/ .*--export-prefix$/)
    }
    const forced = await server.call('session_export', { branch: 'session/mine', force: true })
    expect(text(forced)).toMatch(/^INVALID_ARGUMENT: force is not allowed \(this client cannot ask the user\): .*--allow-force-export/)
    // Refused before any session was opened.
    expect(containersOf(server.base)).toEqual([])

    expect(text(await server.call('write_file', { path: 'b.txt', content: 'b\n' }))).toMatch(/^NO_SESSION: /)
    expect((await server.call('session_open', { title: 'exports' })).isError).toBeFalsy()
    expect((await server.call('write_file', { path: 'b.txt', content: 'b\n' })).isError).toBeFalsy()
    const session = (await server.call('session_list', {})).structuredContent.sessions[0].session
    expect(text(await server.call('session_export', { branch: 'session/mine' }))).toMatch(/^EEXIST: /)
    expect(text(await server.call('session_export', { branch: 'session/mine', force: true }))).toMatch(/^INVALID_ARGUMENT: force is not allowed/)
    expect(text(await server.call('session_export', { branch: 'feature' }))).toMatch(/^INVALID_ARGUMENT: branch 'feature' is outside session\//)
    unmoved(proj, branches)

    const exported = await server.call('session_export', {})
    expect(exported.isError, text(exported)).toBeFalsy()
    expect(exported.structuredContent).toMatchObject({ branch: `session/${session}`, projectDir: proj.path, snapshotOf: null })
    expect(git(proj.path, 'show', `session/${session}:b.txt`)).toBe('b')
    unmoved(proj, branches)
    await closeAndTime(server)
  })

  it('--export-prefix agent/ --allow-force-export: an existing branch under agent/ is moved with force; session/ is outside', async () => {
    const proj = userProject('mcp-exports-agent', ['agent/existing', 'session/mine'])
    const server = await startServer(proj.path, ['--image', IMAGES.debian, '--export-prefix', 'agent/', '--allow-force-export', '--auto-session'])
    expect((await server.call('write_file', { path: 'b.txt', content: 'b\n' })).isError).toBeFalsy()
    expect(text(await server.call('session_export', { branch: 'session/mine', force: true }))).toMatch(/^INVALID_ARGUMENT: branch 'session\/mine' is outside agent\/: /)
    expect(text(await server.call('session_export', { branch: 'agent/existing' }))).toMatch(/^EEXIST: /)
    unmoved(proj, ['main', 'agent/existing', 'session/mine'])
    const moved = await server.call('session_export', { branch: 'agent/existing', force: true })
    expect(moved.isError, text(moved)).toBeFalsy()
    expect(moved.structuredContent).toMatchObject({ branch: 'agent/existing', previous: proj.tip })
    expect(git(proj.path, 'rev-parse', 'agent/existing')).toBe(moved.structuredContent.commit)
    const session = (await server.call('session_list', {})).structuredContent.sessions[0].session
    const byDefault = await server.call('session_export', {})
    expect(byDefault.structuredContent).toMatchObject({ branch: `agent/${session}` })
    unmoved(proj, ['main', 'session/mine'])
    await closeAndTime(server)
  })

  it('force through the client: the user is asked each time; no leaves the branch where it was, yes moves it', async () => {
    const proj = userProject('mcp-exports-ask', ['session/mine'])
    const server = await startServer(proj.path, ['--image', IMAGES.debian], { elicitation: { form: {} } })
    const asks: string[] = []
    let answer: 'accept' | 'decline' = 'decline'
    server.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asks.push(request.params.message)
      return answer === 'accept' ? { action: 'accept', content: { allow: true } } : { action: 'decline' }
    })
    expect((await server.call('session_open', { title: 'asked' })).isError).toBeFalsy()
    expect((await server.call('write_file', { path: 'b.txt', content: 'b\n' })).isError).toBeFalsy()
    const declined = await server.call('session_export', { branch: 'session/mine', force: true })
    expect(text(declined)).toMatch(/^INVALID_ARGUMENT: force is not allowed \(the user did not allow it\)/)
    expect(asks).toHaveLength(1)
    expect(asks[0]).toMatch(/^Let the isolated session "asked" \(asked-[0-9a-f]{6}\) move the branch session\/mine of /)
    expect(asks[0]).toContain(proj.path)
    unmoved(proj, ['main', 'session/mine'])
    answer = 'accept'
    const moved = await server.call('session_export', { branch: 'session/mine', force: true })
    expect(moved.isError, text(moved)).toBeFalsy()
    expect(asks).toHaveLength(2)
    expect(git(proj.path, 'rev-parse', 'session/mine')).toBe(moved.structuredContent.commit)
    expect(git(proj.path, 'rev-parse', 'main')).toBe(proj.tip)
    await closeAndTime(server)
  })
})

describe('container-isolation mcp on a folder that is not a git repository', () => {
  it('a whole session — open, list and read, write, run, export, close — leaves the folder byte-for-byte the same', async () => {
    const folder = plainFolder('mcp-plain')
    dirs.push(folder)
    const before = folderManifest(folder.path)
    const server = await startServer(folder.path, ['--image', IMAGES.debian])
    expect(text(await server.call('session_open', { title: 'bad ref', ref: 'main' }))).toMatch(/^GIT_REF_NOT_FOUND: /)
    const opened = await server.call('session_open', { title: 'plain' })
    expect(opened.isError, text(opened)).toBeFalsy()
    const session = opened.structuredContent.session

    const listed = await server.call('list_directory', { session })
    expect(listed.structuredContent.entries.map((e: { name: string }) => e.name).sort()).toEqual(
      ['.git', '.gitignore', 'README.md', 'app-link', 'dangling-link', 'docs', 'outside-link', 'run.sh', 'src'],
    )
    expect((await server.call('read_file', { session, path: 'docs/guide.md' })).structuredContent.content).toBe('# guide\n')
    expect((await server.call('write_file', { session, path: 'src/new.js', content: 'export const added = 1\n' })).isError).toBeFalsy()
    const ran = await server.call('run_command', { session, command: 'readlink outside-link app-link; ./run.sh; git status --porcelain' })
    expect(ran.structuredContent.output.map((l: { text: string }) => l.text)).toEqual(['/etc/hostname', 'src/app.js', 'ran', '?? src/new.js'])

    const exported = await server.call('session_export', { session })
    expect(exported.isError, text(exported)).toBeFalsy()
    const own = join(server.base, 'repositories', `session-${session}`)
    expect(exported.structuredContent).toMatchObject({ branch: `session/${session}`, projectDir: own, snapshotOf: realpathSync(folder.path) })
    expect(exported.structuredContent.howToGet).toContain(`git fetch ${own} session/${session}`)
    expect(exported.structuredContent.howToGet).toContain('is not a git repository and is never written')
    expect(git(own, 'show', `session/${session}:src/new.js`)).toBe('export const added = 1')
    expect((await server.call('session_close', { session })).isError).toBeFalsy()
    await closeAndTime(server)
    expect(containersOf(server.base)).toEqual([])
    expect(folderManifest(folder.path)).toEqual(before)
  })
})

