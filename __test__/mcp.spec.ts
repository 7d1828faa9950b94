// `container-isolation mcp` driven as an MCP client drives it: the SDK's own Client over
// StdioClientTransport (mcp-harness.ts) spawns the server, lists its tools and their
// annotations, and works in isolated sessions of a temporary git project — files, search,
// commands with progress and cancellation, changes and export, questions to the user
// (elicitation), malformed calls — and checks that nothing of the server's is left in the
// engine once the client has closed. The exits (export prefix, force, plain folders) are
// mcp-exits.spec.ts.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { engine, engineCli, git, gitProject, IMAGES } from './helpers'
import { ERROR_META, cliPath, closeAndTime, closeServers, containersOf, dirs, type Server, startServer, text, timings, type ToolResult } from './mcp-harness'

// The servers' search deadline (20 s by default): 4 s, so that the endless search below burns
// 4 s of a core beside the other passes instead of 20.
process.env.CONTAINER_ISOLATION_MCP_SEARCH_MS = '4000'

const measured: Record<string, number> = {}

const APP_JS = 'export const greet = (name) => `hello ${name}`\n'
const UTIL_JS = 'export const twice = (x) => x * 2\n'
const project = gitProject('mcp-project', { 'src/app.js': APP_JS, 'src/util.js': UTIL_JS, 'notes.md': '# notes\nTODO: one\nTODO: two\n' })
dirs.push(project)
const devProject = gitProject('mcp-devcontainer', { '.devcontainer.json': `{ "image": "${IMAGES.debian}", "capAdd": ["SYS_PTRACE"] }\n` })
dirs.push(devProject)

afterAll(async () => {
  await closeServers()
  const rows = [...timings].map(([name, ms]) => `${name.padEnd(16)} n=${String(ms.length).padStart(2)}  median ${median(ms).toFixed(1).padStart(7)} ms  max ${Math.max(...ms).toFixed(1).padStart(7)} ms`)
  console.log(`[mcp] tool-call latencies (client round trip)\n${rows.join('\n')}\n[mcp] ${JSON.stringify(measured)}`)
})

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * `call` awaited while read_file asks for `path` again and again (50 ms apart): how long
 * the call took and how long each read did, with what it read.
 */
async function readsWhile(server: Server, session: string, path: string, call: Promise<ToolResult>) {
  const started = performance.now()
  let done = false
  const finished = call.finally(() => (done = true))
  const reads: Array<{ ms: number; content: string }> = []
  while (!done) {
    const at = performance.now()
    const read = await server.call('read_file', { session, path })
    reads.push({ ms: performance.now() - at, content: read.structuredContent?.content })
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  const result = await finished
  return { result, ms: performance.now() - started, reads }
}

describe('container-isolation mcp', () => {
  let main: Server
  let session: string

  beforeAll(async () => {
    main = await startServer(project.path, ['--image', IMAGES.debian])
  })

  it('lists eighteen tools, each with JSON Schema objects for its input (unknown keys refused) and output, and a description saying where it acts', async () => {
    const { tools } = await main.client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['command_input', 'command_kill', 'command_output', 'edit_file', 'find_files', 'list_directory', 'read_file', 'run_command', 'search_text', 'session_changes', 'session_checkpoint', 'session_close', 'session_export', 'session_fork', 'session_list', 'session_open', 'session_restore', 'write_file'],
    )
    const required: Record<string, string[]> = { read_file: ['path'], write_file: ['content', 'path'], edit_file: ['newText', 'oldText', 'path'], run_command: ['command'], session_open: [], find_files: ['pattern'], search_text: ['pattern'], session_list: [], command_output: ['commandId'], command_kill: ['commandId'], command_input: ['commandId', 'keys'] }
    for (const tool of tools) {
      const schema = tool.inputSchema as { type: string; properties: Record<string, { type?: string }>; required: string[]; additionalProperties?: boolean }
      expect(schema.type, tool.name).toBe('object')
      expect(schema.additionalProperties, tool.name).toBe(false)
      expect(tool.outputSchema?.type, tool.name).toBe('object')
      expect(Object.keys(tool.outputSchema?.properties ?? {}).length, tool.name).toBeGreaterThan(0)
      expect(Array.isArray(schema.required), tool.name).toBe(true)
      for (const name of schema.required) expect(schema.properties[name], `${tool.name}.${name}`).toBeDefined()
      for (const [name, prop] of Object.entries(schema.properties)) expect(typeof prop.type, `${tool.name}.${name}`).toBe('string')
      if (required[tool.name]) expect([...schema.required].sort(), tool.name).toEqual(required[tool.name])
      if (tool.name !== 'session_list') expect(schema.properties.session?.type, tool.name).toBe('string')
      expect(tool.description, tool.name).toContain('inside the isolated session')
      expect(tool.description, tool.name).toContain("never on the user's own files")
    }
  })

  it('annotates every tool with a title and what it really does', async () => {
    const { tools } = await main.client.listTools()
    const hints = (readOnlyHint: boolean, destructiveHint: boolean, idempotentHint: boolean, openWorldHint: boolean) => ({ readOnlyHint, destructiveHint, idempotentHint, openWorldHint })
    // Without --auto-session no tool opens a session unasked: the reading ones only read.
    const reads = hints(true, false, true, false)
    const expected: Record<string, ReturnType<typeof hints>> = {
      session_open: hints(false, false, false, false),
      session_list: hints(true, false, true, false),
      session_close: hints(false, true, true, false),
      session_changes: reads,
      session_export: hints(false, false, true, false),
      read_file: reads,
      list_directory: reads,
      find_files: reads,
      search_text: reads,
      write_file: hints(false, true, true, false),
      edit_file: hints(false, true, false, false),
      run_command: hints(false, true, false, true),
      command_output: reads,
      command_kill: hints(false, true, true, false),
      command_input: hints(false, true, false, false),
      session_checkpoint: hints(false, false, false, false),
      session_restore: hints(false, true, true, false),
      session_fork: hints(false, false, false, false),
    }
    for (const tool of tools) {
      expect(tool.title, tool.name).toMatch(/^[A-Z].{5,}/)
      expect(tool.annotations, tool.name).toEqual({ title: tool.title, ...expected[tool.name] })
    }
    expect(tools.find((t) => t.name === 'session_export')?.description).toContain('A branch outside session/ is refused')
  })

  it('checkpoints a session, restores it (its commands stopped, the later file gone) and forks another from the checkpoint', async () => {
    const opened = await main.call('session_open', { title: 'Try undo' })
    const id = opened.structuredContent.session
    expect((await main.call('write_file', { session: id, path: 'kept.txt', content: 'kept\n' })).isError).toBeFalsy()
    const made = await main.call('session_checkpoint', { session: id, label: 'one file' })
    expect(made.isError, text(made)).toBeFalsy()
    const checkpoint = made.structuredContent.checkpoint.id
    expect(made.structuredContent.checkpoints.map((c: { id: string }) => c.id)).toEqual([checkpoint])
    await main.call('write_file', { session: id, path: 'later.txt', content: 'later\n' })
    const restored = await main.call('session_restore', { session: id, checkpoint })
    expect(restored.isError, text(restored)).toBeFalsy()
    expect((await main.call('read_file', { session: id, path: 'later.txt' })).isError).toBe(true)
    expect((await main.call('read_file', { session: id, path: 'kept.txt' })).structuredContent.content).toContain('kept')
    const forked = await main.call('session_fork', { session: id, title: 'Other way', checkpoint })
    expect(forked.isError, text(forked)).toBeFalsy()
    const other = forked.structuredContent.session
    expect(other).toMatch(/^other-way-[0-9a-f]{6}$/)
    expect((await main.call('read_file', { session: other, path: 'kept.txt' })).structuredContent.content).toContain('kept')
    for (const s of [other, id]) expect((await main.call('session_close', { session: s })).isError).toBeFalsy()
  }, 180_000)

  it('opens a session, then writes, edits, reads, lists, finds and searches its files; the project is untouched', async () => {
    const opened = await main.call('session_open', { title: 'Edit the app' })
    expect(opened.isError, text(opened)).toBeFalsy()
    session = opened.structuredContent.session
    expect(session).toMatch(/^edit-the-app-[0-9a-f]{6}$/)
    expect(opened.structuredContent).toMatchObject({ branch: `session-${session}`, workspaceFolder: '/workspace', lifetime: 'process' })

    const wrote = await main.call('write_file', { session, path: 'src/new/feature.js', content: 'export const feature = 1\nexport const other = 1\n' })
    expect(wrote.structuredContent).toEqual({ path: 'src/new/feature.js', bytes: 48, created: true })
    // The text part is the structured result, serialized: a client that ignores structuredContent sees every field.
    expect(JSON.parse(text(wrote))).toEqual(wrote.structuredContent)
    const ambiguous = await main.call('edit_file', { session, path: 'src/new/feature.js', oldText: '= 1', newText: '= 2' })
    expect(ambiguous.isError).toBe(true)
    expect(text(ambiguous)).toMatch(/^EDIT_AMBIGUOUS: oldText occurs 2 times in src\/new\/feature.js \(lines 1, 2\)/)
    const missing = await main.call('edit_file', { session, path: 'src/new/feature.js', oldText: 'absent', newText: 'x' })
    expect(text(missing)).toMatch(/^EDIT_NO_MATCH: /)
    const edited = await main.call('edit_file', { session, path: 'src/new/feature.js', oldText: 'other = 1', newText: 'other = 2' })
    expect(edited.structuredContent).toEqual({ path: 'src/new/feature.js', replacements: 1, line: 2 })
    const read = await main.call('read_file', { session, path: '/workspace/src/new/feature.js' })
    expect(read.structuredContent.content).toBe('export const feature = 1\nexport const other = 2\n')
    const part = await main.call('read_file', { session, path: 'notes.md', offset: 2, limit: 1 })
    expect(part.structuredContent).toMatchObject({ content: 'TODO: one\n', totalLines: 3, startLine: 2, endLine: 2, truncated: true })
    expect(part.structuredContent.note).toContain('read on with offset 3')

    const listed = await main.call('list_directory', { session, path: 'src' })
    expect(listed.structuredContent.entries).toEqual([
      { name: 'app.js', type: 'file', size: Buffer.byteLength(APP_JS) },
      { name: 'new', type: 'directory' },
      { name: 'util.js', type: 'file', size: Buffer.byteLength(UTIL_JS) },
    ])
    const found = await main.call('find_files', { session, pattern: '**/*.js' })
    expect(found.structuredContent.files).toEqual(['src/app.js', 'src/new/feature.js', 'src/util.js'])
    expect((await main.call('find_files', { session, pattern: '*.md' })).structuredContent.files).toEqual(['README.md', 'notes.md'])
    const searched = await main.call('search_text', { session, pattern: 'TODO: \\w+', glob: '*.md' })
    expect(searched.structuredContent.matches).toEqual([
      { path: 'notes.md', line: 2, text: 'TODO: one' },
      { path: 'notes.md', line: 3, text: 'TODO: two' },
    ])
    const bounded = await main.call('search_text', { session, pattern: 'export', maxMatches: 2 })
    expect(bounded.structuredContent).toMatchObject({ truncated: true })
    expect(bounded.structuredContent.matches).toHaveLength(2)
    const slow = await main.call('write_file', { session, path: 'slow.txt', content: `${'a'.repeat(40)}c\n` })
    expect(slow.isError).toBeFalsy()
    // A pattern that backtracks without end elsewhere is matched in linear time here.
    const backtracking = await main.call('search_text', { session, pattern: '(a+)+b', glob: 'slow.txt' })
    expect(backtracking.structuredContent).toEqual({ matches: [], filesSearched: 1, filesSkipped: 0, truncated: false })

    // The user's project: none of it happened there.
    expect(existsSync(join(project.path, 'src', 'new'))).toBe(false)
    expect(git(project.path, 'status', '--porcelain')).toBe('')
  })

  it("a client's pattern that backtracks without end costs the server little time, off its event loop: find_files and search_text answer promptly, read_file meanwhile too", async () => {
    const opened = await main.call('session_open', { title: 'Hostile patterns' })
    expect(opened.isError, text(opened)).toBeFalsy()
    const id = opened.structuredContent.session
    // 40 files, each a long name of a's holding a line of a's: a backtracking engine tries
    // every way of splitting them (the glob for ever, the regex ~0.5 s a file).
    const line = 'a'.repeat(24)
    const name = (i: number) => `slow/${'a'.repeat(40)}${i}.txt`
    const made = await main.call('run_command', { session: id, command: `mkdir slow && for i in $(seq 40); do echo ${line} > ${name(0).replace('0.txt', '$i.txt')}; done && ls slow | wc -l` })
    expect(made.structuredContent.output.map((l: { text: string }) => l.text), text(made)).toEqual(['40'])

    const found = await readsWhile(main, id, name(1), main.call('find_files', { session: id, pattern: '*a*a*a*a*a*a*a*a*a*a*a*b' }))
    expect(found.result.structuredContent, text(found.result)).toEqual({ files: [], total: 0, truncated: false })
    const searched = await readsWhile(main, id, name(1), main.call('search_text', { session: id, pattern: '(a+)+$b', path: 'slow' }))
    expect(searched.result.structuredContent, text(searched.result)).toEqual({ matches: [], filesSearched: 40, filesSkipped: 0, truncated: false })
    for (const [what, run] of [['find', found], ['search', searched]] as const) {
      expect(run.ms, what).toBeLessThan(5000)
      expect(run.reads.every((r) => r.content === `${line}\n`), what).toBe(true)
      expect(Math.max(...run.reads.map((r) => r.ms)), what).toBeLessThan(2000)
    }
    measured.hostileGlobMs = Math.round(found.ms)
    measured.hostileRegexMs = Math.round(searched.ms)
    expect((await main.call('session_close', { session: id })).isError).toBeFalsy()
  })

  it('a search that would run for ever stops at the deadline of its call (4 s here), with what it found and a note; the server answers meanwhile', async () => {
    const opened = await main.call('session_open', { title: 'Endless search' })
    expect(opened.isError, text(opened)).toBeFalsy()
    const id = opened.structuredContent.session
    // One line of a million a's and b's at random, and a pattern whose automaton has some
    // 20,000 states alive at each byte of it: linear, but far beyond the deadline.
    const big = Array.from({ length: 1_000_000 }, () => (Math.random() < 0.5 ? 'a' : 'b')).join('')
    expect((await main.call('write_file', { session: id, path: 'big.txt', content: `match me\n${big}\n` })).isError).toBeFalsy()
    expect((await main.call('write_file', { session: id, path: 'small.txt', content: 'hello\n' })).isError).toBeFalsy()
    const searched = await readsWhile(main, id, 'small.txt', main.call('search_text', { session: id, pattern: '^match|[ab]*a[ab]{20000}c', glob: 'big.txt' }))
    expect(searched.result.isError, text(searched.result)).toBeFalsy()
    expect(searched.result.structuredContent).toEqual({
      matches: [{ path: 'big.txt', line: 1, text: 'match me' }],
      filesSearched: 1,
      filesSkipped: 0,
      truncated: true,
      note: 'stopped at the 4 s deadline of a call after 1 of 1 files: narrow the pattern, path or glob',
    })
    expect(searched.ms).toBeGreaterThan(3_500)
    expect(searched.ms).toBeLessThan(10_000)
    expect(searched.reads.length).toBeGreaterThan(5)
    expect(Math.max(...searched.reads.map((r) => r.ms))).toBeLessThan(2000)
    measured.deadlineSearchMs = Math.round(searched.ms)
    expect((await main.call('session_close', { session: id })).isError).toBeFalsy()
  }, 60_000)

  it('run_command streams output as progress notifications before its result, and serves other calls meanwhile', async () => {
    const progress: Array<{ at: number; message?: string; progress: number }> = []
    const result = await main.call(
      'run_command',
      { session, command: 'for i in 1 2 3 4 5; do echo tick $i; sleep 0.2; done; echo done >&2' },
      { onprogress: (p) => progress.push({ at: performance.now(), message: p.message, progress: p.progress }) },
    )
    const resolvedAt = performance.now()
    expect(result.isError, text(result)).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ status: 'exited', exitCode: 0, signal: null, timedOut: false, fromOffset: 0, nextOffset: 6, totalLines: 6 })
    const lines = (r: ToolResult) => r.structuredContent.output.map((l: { text: string }) => l.text)
    expect(lines(result)).toEqual(['tick 1', 'tick 2', 'tick 3', 'tick 4', 'tick 5', 'done'])
    // Lines arrive as they are printed; those of the command's last moments come in the result only.
    expect(progress.length).toBeGreaterThanOrEqual(3)
    const streamed = progress.map((p) => p.message).join('\n').split('\n')
    expect(streamed.slice(0, 4)).toEqual(['tick 1', 'tick 2', 'tick 3', 'tick 4'])
    expect(lines(result).slice(0, streamed.length)).toEqual(streamed)
    // progress rises with every notification (the milliseconds waited), as MCP requires.
    expect(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress)).toBe(true)
    expect(progress.every((p) => p.at <= resolvedAt)).toBe(true)
    expect(result.structuredContent.progressNotifications).toBe(progress.length)
    expect(main.errors).toEqual([])
    measured.progressNotifications = progress.length
    measured.firstProgressBeforeResultMs = Math.round(resolvedAt - progress[0].at)

    const inFolder = await main.call('run_command', { session, command: 'pwd; ls', cwd: 'src' })
    expect(lines(inFolder)).toEqual(['/workspace/src', 'app.js', 'new', 'util.js'])
    const failing = await main.call('run_command', { session, command: 'echo oops >&2; exit 3' })
    expect(failing.structuredContent).toMatchObject({ exitCode: 3, output: [{ stream: 'stderr', text: 'oops' }] })
    const timedOut = await main.call('run_command', { session, command: 'sleep 30', timeoutMs: 500 })
    expect(timedOut.structuredContent).toMatchObject({ status: 'timedOut', timedOut: true, running: false })
    expect(timedOut.structuredContent.durationMs).toBeLessThan(3000)
  })

  it('run_command with a long output (606,062 lines, 60 MB): the result ends with its last line and counts every line', async () => {
    // 60 MB took 28 s alone and over 55 s beside a full run: each call waits 45 s, under the
    // client's own 60 s request timeout, and a command still running is followed to its end
    // by command_output.
    const result = await main.call('run_command', { session, command: "yes 'a line of output that is one hundred bytes long, padded out with dots ..........................' | head -n 606061; echo END-OF-MANY", waitMs: 45_000 })
    expect(result.isError, text(result)).toBeFalsy()
    let last = result.structuredContent
    if (last.status === 'running') {
      const { commandId } = last
      while (last.status === 'running') {
        last = (await main.call('command_output', { session, commandId, offset: last.totalLines, waitMs: 45_000 })).structuredContent
      }
      last = (await main.call('command_output', { session, commandId, offset: last.totalLines - 2 })).structuredContent
    }
    const { output, totalLines, nextOffset, status } = last
    expect({ status, totalLines, nextOffset }).toEqual({ status: 'exited', totalLines: 606062, nextOffset: 606062 })
    expect(output.at(-1)).toEqual({ stream: 'stdout', text: 'END-OF-MANY' })
    expect(output.at(-2).text).toMatch(/^a line of output/)
  }, 400_000)

  it('run_command with tty: a prompt read from the screen and answered with command_input, the terminal sized as asked', async () => {
    const asked = await main.call('run_command', { session, command: 'printf "%s cols\\n" "$(tput cols)"; read -p "name? " n; echo "hi $n"', tty: true, cols: 90, rows: 10, waitMs: 20_000 })
    const first = asked.structuredContent
    expect(first.running).toBe(true)
    expect(first.output.map((l: { text: string }) => l.text)).toEqual(['90 cols', 'name?'])
    expect(first.tty).toMatchObject({ cols: 90, rows: 10, cursorRow: 1, cursorColumn: 6 })
    expect(first.note).toContain('command_input')
    const answered = (await main.call('command_input', { session, commandId: first.commandId, keys: 'bob\r', waitMs: 20_000 })).structuredContent
    expect(answered.output.map((l: { text: string }) => l.text)).toEqual(['90 cols', 'name? bob', 'hi bob'])
    const ended = (await main.call('command_output', { session, commandId: first.commandId, waitMs: 20_000 })).structuredContent
    expect(ended).toMatchObject({ status: 'exited', exitCode: 0, running: false })
    // Ctrl-C ends a program that waits, as in a local terminal.
    const waiting = (await main.call('run_command', { session, command: 'sleep 300', tty: true, waitMs: 1500 })).structuredContent
    expect(waiting.running).toBe(true)
    await main.call('command_input', { session, commandId: waiting.commandId, keys: '\u0003', waitMs: 10_000 })
    const stopped = (await main.call('command_output', { session, commandId: waiting.commandId, waitMs: 10_000 })).structuredContent
    expect(stopped.running).toBe(false)
    expect(stopped.exitCode).toBe(130)
    expect(await main.call('command_input', { session, commandId: stopped.commandId, keys: 'x' })).toMatchObject({ isError: true })
    const plain = (await main.call('run_command', { session, command: 'sleep 5', background: true })).structuredContent
    const refused = await main.call('command_input', { session, commandId: plain.commandId, keys: 'x' })
    expect(JSON.stringify(refused.content)).toContain('runs without a terminal')
    await main.call('command_kill', { session, commandId: plain.commandId })
  })

  it('a cancelled run_command (notifications/cancelled) is terminated: its whole process tree is gone from the container', async () => {
    const controller = new AbortController()
    let started: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    const long = main.call(
      'run_command',
      { session, command: 'echo started; setsid sleep 313 & sleep 314; echo never', timeoutMs: 120_000 },
      { signal: controller.signal, onprogress: (p) => p.message?.includes('started') && started() },
    )
    long.catch(() => {})
    await running
    // The server answers other calls while the command runs, in a second shell too.
    const during = performance.now()
    expect((await main.call('read_file', { session, path: 'notes.md', limit: 1 })).structuredContent.content).toContain('# notes')
    // The command's shell, its setsid child and its sleep (a grep for 'sleep 31[34]' is not one).
    const ps = await main.call('run_command', { session, command: "ps -eo args | grep -c 'sleep 31[34]'" })
    measured.callsWhileRunningMs = Math.round(performance.now() - during)
    expect(ps.structuredContent.output[0].text).toBe('3')

    const cancelledAt = performance.now()
    controller.abort()
    await expect(long).rejects.toThrow()
    let remaining = '3'
    while (remaining !== '0' && performance.now() - cancelledAt < 5000) {
      remaining = (await main.call('run_command', { session, command: "ps -eo args | grep -c 'sleep 31[34]' || true" })).structuredContent.output[0].text
    }
    measured.cancelSettleMs = Math.round(performance.now() - cancelledAt)
    expect(remaining).toBe('0')
    expect(measured.cancelSettleMs).toBeLessThan(3000)
  })

  it('session_changes reports the work, session_export writes it as a branch of the project', async () => {
    const commit = await main.call('run_command', { session, command: 'git add src && git -c user.name=A -c user.email=a@e commit -qm "add feature" && echo committed' })
    expect(commit.structuredContent.output.map((l: { text: string }) => l.text), text(commit)).toContain('committed')
    const changes = await main.call('session_changes', { session, patch: true })
    expect(changes.isError, text(changes)).toBeFalsy()
    expect(changes.structuredContent.commits.map((c: { summary: string }) => c.summary)).toEqual(['add feature'])
    expect(changes.structuredContent.files).toEqual([{ path: 'src/new/feature.js', status: 'added', additions: 2, deletions: 0, binary: false }])
    expect(changes.structuredContent.uncommitted, text(changes)).toEqual([{ path: 'slow.txt', status: '??' }])
    expect(changes.structuredContent.patch).toContain('+export const other = 2')

    const exported = await main.call('session_export', { session })
    expect(exported.isError, text(exported)).toBeFalsy()
    const branch = `session/${session}`
    expect(exported.structuredContent).toMatchObject({ branch, projectDir: project.path })
    expect(git(project.path, 'rev-parse', branch)).toBe(exported.structuredContent.commit)
    expect(git(project.path, 'show', `${branch}:src/new/feature.js`)).toBe('export const feature = 1\nexport const other = 2')
    expect(git(project.path, 'log', '--format=%s', '-2', branch).split('\n')[1]).toBe('add feature')
    expect(git(project.path, 'status', '--porcelain')).toBe('')
    expect(git(project.path, 'branch', '--show-current')).toBe('main')
    const again = await main.call('session_export', { session })
    expect(text(again)).toMatch(/^EEXIST: /)
  })

  it('malformed calls are tool errors carrying a code, and the server goes on answering', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['read_file', { session, path: 42 }, /^INVALID_ARGUMENT: read_file: path: .*expected string/],
      ['run_command', { session, command: 'true', timeoutMs: 'soon' }, /^INVALID_ARGUMENT: run_command: timeoutMs: /],
      ['run_command', { session, command: 'true', timeout: 5 }, /^INVALID_ARGUMENT: run_command: unknown argument 'timeout' \(run_command takes session, command, cwd, timeoutMs, waitMs, background, tty, cols, rows\)/],
      ['command_output', { commandId: 'cmd-999' }, /^COMMAND_NOT_FOUND: no command 'cmd-999'/],
      ['write_file', { session }, /^INVALID_ARGUMENT: write_file: path: .*; content: /],
      ['read_file', { session, path: '../../etc/passwd' }, /^INVALID_ARGUMENT: path '..\/..\/etc\/passwd' leaves the session's workspace \/workspace/],
      ['write_file', { session, path: '/etc/passwd', content: 'x' }, /^INVALID_ARGUMENT: path '\/etc\/passwd' leaves/],
      ['list_directory', { session, path: '/' }, /^INVALID_ARGUMENT: path '\/' leaves/],
      ['run_command', { session, command: 'pwd', cwd: '..' }, /^INVALID_ARGUMENT: path '..' leaves/],
      ['read_file', { session, path: 'absent.txt' }, /^ENOENT: /],
      ['read_file', { session, path: 'src' }, /^EISDIR: /],
      ['read_file', { session, path: 'notes.md', offset: 9 }, /^INVALID_ARGUMENT: offset 9 is past the end of notes.md \(3 lines\)/],
      ['read_file', { session: 'nobody', path: 'a' }, /^INVALID_ARGUMENT: no session 'nobody'/],
      ['session_open', {}, /^INVALID_ARGUMENT: session_open: title is needed/],
      ['search_text', { session, pattern: '(' }, /^INVALID_ARGUMENT: pattern is not a regular expression in Rust regex syntax: unclosed group \(at character 1\)$/],
      ['search_text', { session, pattern: 'a(?!b)' }, /^INVALID_ARGUMENT: pattern uses look-around .*, which is not supported: this search matches in linear time/],
      ['search_text', { session, pattern: '(a)\\1' }, /^INVALID_ARGUMENT: pattern uses a backreference/],
      ['search_text', { session, pattern: '\\w{300}' }, /^INVALID_ARGUMENT: pattern compiles to an automaton larger than 4 MiB/],
      ['find_files', { session, pattern: '{a,b' }, /^INVALID_ARGUMENT: glob '\{a,b' is malformed: /],
      ['find_files', { session, pattern: 'a'.repeat(1001) }, /^INVALID_ARGUMENT: a glob pattern is at most 1000 characters$/],
      ['session_open', { title: 'bad ref', ref: 'no-such-branch' }, /^GIT_REF_NOT_FOUND: /],
    ]
    for (const [name, args, expected] of cases) {
      const r = await main.call(name, args)
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true)
      expect(text(r)).toMatch(expected)
      expect(r._meta?.[ERROR_META]).toMatchObject({ code: text(r).split(':')[0] })
      expect(r.structuredContent).toBeUndefined()
    }
    // An unknown tool is a protocol error, as MCP says: invalid params.
    await expect(main.client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("unknown tool 'no_such_tool'") })
    const huge = 'x'.repeat(17 * 1024 * 1024)
    const started = performance.now()
    const tooLarge = await main.call('write_file', { session, path: 'huge.txt', content: huge })
    measured.hugeWriteRefusedMs = Math.round(performance.now() - started)
    expect(text(tooLarge)).toMatch(/^LIMIT_EXCEEDED: content is 17.0 MiB, over the 16.0 MiB write_file takes/)
    expect((await main.call('list_directory', { session })).structuredContent.entries.map((e: { name: string }) => e.name)).not.toContain('huge.txt')
    expect((await main.call('read_file', { session, path: 'notes.md', limit: 1 })).structuredContent.content).toContain('# notes')
  })

  it('after the client closes, the server exits and no container of it remains; its clones are in the trash', async () => {
    const second = await main.call('session_open', { title: 'second' })
    expect(second.isError, text(second)).toBeFalsy()
    const listed = await main.call('session_list', {})
    expect(listed.structuredContent.sessions.map((s: { title: string }) => s.title)).toEqual(['Edit the app', 'second'])
    expect(containersOf(main.base)).toHaveLength(2)
    const logged = await main.call('run_command', { session, command: 'echo logged' })
    const logFile: string = logged.structuredContent.logFilePath
    expect(existsSync(logFile)).toBe(true)
    measured.exitAfterCloseMs = Math.round(await closeAndTime(main))
    // It closed its sessions itself and exited (the SDK's client sends SIGTERM after 2 s).
    expect(measured.exitAfterCloseMs).toBeLessThan(5000)
    expect(main.stderr()).toMatch(/closed 2 session\(s\) in \d+ ms; exiting/)
    expect(main.stderr()).not.toContain('still running')
    expect(containersOf(main.base)).toEqual([])
    // Its command logs went with its sessions: the server's own log folder is gone.
    expect(logFile.startsWith(tmpdir())).toBe(true)
    expect(existsSync(logFile)).toBe(false)
    expect(existsSync(logFile.slice(0, logFile.indexOf(`/${session}/`)))).toBe(false)
    expect(existsSync(join(main.base, 'sessions', `session-${session}`))).toBe(false)
    expect(spawnSync('find', [join(main.base, '.trash'), '-maxdepth', '2', '-name', `session-${session}`], { encoding: 'utf8' }).stdout).toContain(session)
  })
})

// Names the policy resolves to public (benchmarking-range) addresses, so that only its
// answer decides; a connection allowed then goes nowhere.
const POLICY = JSON.stringify({ allow: [], hosts: { 'allowed.test': ['198.18.255.7'], 'declined.test': ['198.18.255.8'], 'undecided.test': ['198.18.255.9'] } })
const curlCode = (host: string) => `curl -s -o /dev/null -w '%{http_code}' --max-time 3 http://${host}/`

describe('container-isolation mcp killed', () => {
  it('with SIGKILL: the watchdog removes its containers', async () => {
    const server = await startServer(project.path, ['--image', IMAGES.debian, '--auto-session'])
    // --auto-session: the first call without a session opens one.
    expect((await server.call('run_command', { command: 'true' })).isError).toBeFalsy()
    expect(containersOf(server.base)).toHaveLength(1)
    const killedAt = performance.now()
    process.kill(server.transport.pid!, 'SIGKILL')
    while (containersOf(server.base).length > 0 && performance.now() - killedAt < 10_000) await new Promise((r) => setTimeout(r, 100))
    measured.watchdogRemovedMs = Math.round(performance.now() - killedAt)
    expect(containersOf(server.base)).toEqual([])
  })
})

describe('container-isolation mcp asks the user through the client', () => {
  it("egress: a host the policy leaves undecided becomes an elicitation; yes lets the connection be tried, no is the relay's 403", async () => {
    const asks: string[] = []
    const server = await startServer(devProject.path, ['--egress', POLICY], { elicitation: { form: {} } })
    let answer = (message: string) => (message.includes('capabilities SYS_PTRACE') ? 'accept' : message.includes('allowed.test') ? 'accept' : 'decline')
    server.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asks.push(request.params.message)
      return answer(request.params.message) === 'accept' ? { action: 'accept', content: { allow: true } } : { action: 'decline' }
    })

    // devcontainer.json asks for SYS_PTRACE: declined first, then accepted.
    const decided = answer
    answer = () => 'decline'
    const refused = await server.call('session_open', { title: 'traced' })
    expect(refused.isError).toBe(true)
    expect(text(refused)).toMatch(/^DEVCONTAINER: /)
    expect(text(refused)).toContain(`The user did not allow it: start the server with --trust '{"capabilities":["SYS_PTRACE"]}'`)
    expect(refused._meta?.[ERROR_META].refusals).toEqual([{ field: 'capAdd', what: 'capabilities SYS_PTRACE', allow: 'capabilities: ["SYS_PTRACE"]', trust: { capabilities: ['SYS_PTRACE'] } }])
    expect(asks[0]).toContain('- capAdd: capabilities SYS_PTRACE (trust.capabilities: ["SYS_PTRACE"])')
    answer = decided
    const opened = await server.call('session_open', { title: 'traced' })
    expect(opened.isError, text(opened)).toBeFalsy()
    const session = opened.structuredContent.session
    expect(engineCli('inspect', '--format', '{{json .HostConfig.CapAdd}}', containersOf(server.base)[0])).toContain('SYS_PTRACE')

    const curl = (host: string) => server.call('run_command', { session, command: curlCode(host), timeoutMs: 60_000 })
    const before = asks.length
    const declined = await curl('declined.test')
    expect(declined.structuredContent.output[0].text).toBe('403')
    expect(asks[before]).toMatch(/^Allow the isolated session "traced" \(traced-[0-9a-f]{6}\) to reach declined\.test:80\?/)
    const accepted = await curl('allowed.test')
    expect(asks[before + 1]).toContain('to reach allowed.test:80?')
    // Allowed: the host then resolves and connects itself; here the name does not exist.
    expect(accepted.structuredContent.output[0].text).not.toBe('403')
    // The answer holds for the session: no second question.
    await curl('declined.test')
    expect(asks).toHaveLength(before + 2)

    measured.elicitServerExitMs = Math.round(await closeAndTime(server))
    expect(containersOf(server.base)).toEqual([])
  })

  it('without the elicitation capability: undecided hosts are refused unasked, and devcontainer.json asks are a tool error naming --trust', async () => {
    const plain = await startServer(project.path, ['--image', IMAGES.debian, '--egress', POLICY])
    expect((await plain.call('session_open', { title: 'plain' })).isError).toBeFalsy()
    const refused = await plain.call('run_command', { command: curlCode('undecided.test'), timeoutMs: 60_000 })
    expect(refused.isError, text(refused)).toBeFalsy()
    expect(refused.structuredContent.output[0].text).toBe('403')
    const dev = await startServer(devProject.path, [])
    const opened = await dev.call('session_open', { title: 'traced' })
    expect(text(opened)).toMatch(/^DEVCONTAINER: /)
    expect(text(opened)).toContain(`The client cannot ask the user: start the server with --trust '{"capabilities":["SYS_PTRACE"]}' to allow it.`)
    // A session that could not be made leaves no clone behind.
    expect(readDirNames(join(dev.base, 'sessions'))).toEqual([])
    const granted = await startServer(devProject.path, ['--trust', '{"capabilities":["SYS_PTRACE"]}'])
    expect((await granted.call('session_open', { title: 'traced' })).isError).toBeFalsy()
    for (const s of [plain, dev, granted]) {
      await closeAndTime(s)
      expect(containersOf(s.base)).toEqual([])
    }
  })
})

describe('container-isolation mcp --keep', () => {
  it('leaves the sessions stopped with their logs; a later server lists them and takes one up; ls and export see them', async () => {
    const server = await startServer(project.path, ['--image', IMAGES.debian, '--keep'])
    const opened = await server.call('session_open', { title: 'kept work' })
    expect(opened.structuredContent).toMatchObject({ lifetime: 'session', attached: false })
    const session = opened.structuredContent.session
    expect((await server.call('write_file', { path: 'kept.txt', content: 'kept\n' })).isError).toBeFalsy()
    const ran = await server.call('run_command', { command: 'echo logged' })
    const logFile = ran.structuredContent.logFilePath
    expect(logFile.startsWith(join(server.base, 'mcp', 'logs', session))).toBe(true)
    await closeAndTime(server)
    expect(existsSync(logFile)).toBe(true)

    // A second server on the same project: the session is listed as kept, and taken up.
    const later = await startServer(project.path, ['--image', IMAGES.debian, '--keep'], {}, server.base)
    const listed = await later.call('session_list', {})
    expect(listed.structuredContent.sessions).toEqual([expect.objectContaining({ session, title: 'kept work', state: 'stopped', open: false, lifetime: 'session' })])
    expect(text(await later.call('read_file', { path: 'kept.txt' }))).toMatch(/^NO_SESSION: /)
    const attached = await later.call('session_open', { session })
    expect(attached.structuredContent).toMatchObject({ session, title: 'kept work', attached: true })
    expect((await later.call('read_file', { path: 'kept.txt' })).structuredContent.content).toBe('kept\n')
    expect((await later.call('session_list', {})).structuredContent.sessions).toEqual([expect.objectContaining({ session, state: 'running', open: true })])
    await closeAndTime(later)

    const env = { ...process.env, DOCKER_HOST: `unix://${engine.socketPath}` }
    const ls = spawnSync(process.execPath, [cliPath, 'ls', '--json', '--base-dir', server.base], { encoding: 'utf8', env })
    expect(JSON.parse(ls.stdout)).toEqual([expect.objectContaining({ sessionId: session, state: 'stopped' })])
    const exported = spawnSync(process.execPath, [cliPath, 'export', session, '--uncommitted', '--base-dir', server.base], { encoding: 'utf8', env })
    expect(exported.status, exported.stderr).toBe(0)
    expect(git(project.path, 'show', `session/${session}:kept.txt`)).toBe('kept')
    const down = spawnSync(process.execPath, [cliPath, 'down', session, '--base-dir', server.base], { encoding: 'utf8', env })
    expect(down.status, down.stderr).toBe(0)
    expect(containersOf(server.base)).toEqual([])
  })
})
describe('the stdio transport', () => {
  it('skips a message over its bound and answers it as an error, then reads the next', async () => {
    const { LineTransport } = createRequire(import.meta.url)('../lib/mcp/stdio-transport.js')
    const input = new PassThrough()
    const output = new PassThrough()
    const transport = new LineTransport(input, output, 1024)
    const received: unknown[] = []
    transport.onmessage = (m: unknown) => received.push(m)
    await transport.start()
    const big = JSON.stringify({ method: 'tools/call', params: { name: 'write_file', arguments: { content: 'x'.repeat(5000) } }, jsonrpc: '2.0', id: 7 })
    input.write(`${big.slice(0, 3000)}`)
    input.write(`${big.slice(3000)}\n{"jsonrpc":"2.0","id":8,"method":"ping"}\n`)
    await new Promise((r) => setImmediate(r))
    expect(received).toEqual([{ jsonrpc: '2.0', id: 8, method: 'ping' }])
    const answer = JSON.parse(output.read().toString())
    expect(answer).toMatchObject({ id: 7, result: { isError: true, _meta: { [ERROR_META]: { code: 'LIMIT_EXCEEDED' } } } })
  })
})

describe('the JSON-RPC gate', () => {
  it('answers what is not one well-formed message with the error JSON-RPC and MCP name, with the id where one can be read', () => {
    const { screen } = createRequire(import.meta.url)('../lib/mcp/jsonrpc-gate.js')
    const error = (line: string) => screen(line).answer?.error && { id: screen(line).answer.id, code: screen(line).answer.error.code }
    expect(error('{"jsonrpc":"2.0","id":"raw-1","method":')).toEqual({ id: 'raw-1', code: -32700 })
    expect(error('not json')).toEqual({ id: null, code: -32700 })
    expect(error('[{"jsonrpc":"2.0","id":1,"method":"ping"}]')).toEqual({ id: null, code: -32600 })
    expect(error('42')).toEqual({ id: null, code: -32600 })
    expect(error('{"id":3,"method":"ping"}')).toEqual({ id: 3, code: -32600 })
    expect(error('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1]}')).toEqual({ id: 4, code: -32600 })
    expect(error('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}')).toEqual({ id: null, code: -32600 })
    expect(error('{"jsonrpc":"2.0","id":5,"method":7}')).toEqual({ id: 5, code: -32600 })
    expect(error('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}}')).toEqual({ id: 6, code: -32602 })
    expect(screen('{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}}').answer.error.message).toBe('invalid params for tools/call: params.name: Invalid input: expected string, received undefined')
    expect(error('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":[]}}')).toEqual({ id: 7, code: -32602 })
    // A notification is never answered; a method MCP does not define is the SDK's -32601.
    expect(screen('{"jsonrpc":"2.0","method":"notifications/cancelled","params":[]}')).toEqual({ report: expect.stringContaining('params must be an object') })
    expect(screen('{"jsonrpc":"2.0","id":8,"method":"no/such","params":{}}')).toEqual({ message: { jsonrpc: '2.0', id: 8, method: 'no/such', params: {} } })
  })
})

function readDirNames(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith('.')) : []
}
