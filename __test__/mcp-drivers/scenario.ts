// The scenario every MCP client drives (mcp-clients.spec.ts): its steps, and `check`, what
// each client's transcript must show. A session is opened, its files written, edited,
// read, searched; a failing command; a 70 s command in the background whose output is
// read while it runs and then waited for; a cancelled command; changes with committed and
// uncommitted work; an export; every protocol error a client can meet; the session closed.
import { expect } from 'vitest'
import type { Entry, Progress, Step } from './steps'

const session = '${open.result.structuredContent.session}'
const commandId = '${long.result.structuredContent.commandId}'
/** Long enough that the client's 60 s default would end a call that waited for all of it. */
const LONG_SECONDS = 70

export const steps: Step[] = [
  { id: 'list', op: 'list' },
  { id: 'none-open', op: 'call', tool: 'read_file', args: { path: 'src/app.js' } },
  { id: 'open', op: 'call', tool: 'session_open', args: { title: 'Clients' } },
  { id: 'long', op: 'call', tool: 'run_command', args: { command: `for i in $(seq 1 ${LONG_SECONDS}); do echo tick $i; sleep 1; done`, background: true } },
  // Without a session: the one open session.
  { id: 'write', op: 'call', tool: 'write_file', args: { path: 'notes/hello.txt', content: 'hello from a client\n' } },
  { id: 'edit', op: 'call', tool: 'edit_file', args: { session, path: 'notes/hello.txt', oldText: 'a client', newText: 'every client' } },
  { id: 'read', op: 'call', tool: 'read_file', args: { session, path: 'notes/hello.txt' } },
  { id: 'search', op: 'call', tool: 'search_text', args: { session, pattern: 'every \\w+' } },
  { id: 'find', op: 'call', tool: 'find_files', args: { session, pattern: '**/*.txt' } },
  { id: 'failing', op: 'call', tool: 'run_command', args: { session, command: 'echo oops >&2; exit 3' } },
  { id: 'unknown-arg', op: 'call', tool: 'run_command', args: { session, command: 'true', timeout: 5 } },
  { id: 'long-read', op: 'call', tool: 'command_output', args: { commandId, waitMs: 1500 } },
  { id: 'run', op: 'call', tool: 'run_command', args: { session, command: 'for i in 1 2 3; do echo $i; sleep 0.3; done' }, progress: true },
  { id: 'slow', op: 'call', tool: 'run_command', args: { session, command: 'sleep 5' }, timeoutMs: 1000 },
  { id: 'cancel', op: 'cancel', tool: 'run_command', args: { session, command: 'echo started; sleep 30' }, after: { progress: 1 } },
  { id: 'commit', op: 'call', tool: 'run_command', args: { session, command: 'git add notes && git -c user.name=A -c user.email=a@example.com commit -qm "add hello" && echo committed' } },
  { id: 'dirty', op: 'call', tool: 'write_file', args: { session, path: 'src/app.js', content: 'export const app = 2\n' } },
  { id: 'untracked', op: 'call', tool: 'write_file', args: { session, path: 'scratch.txt', content: 'not committed\n' } },
  { id: 'changes', op: 'call', tool: 'session_changes', args: { session, patch: true } },
  { id: 'export', op: 'call', tool: 'session_export', args: { session } },
  { id: 'malformed', op: 'raw', line: '{"jsonrpc":"2.0","id":"raw-1","method":' },
  { id: 'params-not-object', op: 'raw', line: '{"jsonrpc":"2.0","id":"raw-2","method":"tools/call","params":"read_file"}' },
  { id: 'batch', op: 'raw', line: '[{"jsonrpc":"2.0","id":"raw-3","method":"ping"}]' },
  { id: 'no-jsonrpc', op: 'raw', line: '{"id":"raw-4","method":"ping"}' },
  // What the Python SDK's high-level Client sends first (2026-07-28); an error answer makes it fall back to initialize.
  { id: 'discover', op: 'request', method: 'server/discover', params: {} },
  { id: 'unknown-tool', op: 'request', method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
  { id: 'no-name', op: 'request', method: 'tools/call', params: { arguments: {} } },
  { id: 'long-wait', op: 'call', tool: 'command_output', args: { commandId, waitMs: 50_000 }, progress: true },
  { id: 'long-end', op: 'call', tool: 'command_output', args: { commandId, waitMs: 50_000 } },
  { id: 'close', op: 'call', tool: 'session_close', args: {} },
  { id: 'after-close', op: 'call', tool: 'read_file', args: { path: 'notes/hello.txt' } },
]

/** Steps whose answer depends on timing (how far the long command is): not compared between clients. */
export const timingDependent = new Set(['long', 'long-read', 'long-wait', 'long-end'])

type Any = Record<string, any>
const text = (entry: Any) => (entry.result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n')
const lines = (progress: Progress[]) => progress.map((p) => p.message ?? '').join('\n').split('\n')
const outputOf = (entry: Any) => (entry.result.structuredContent.output as Array<{ text: string }>).map((l) => l.text)

/** What one client's transcript of `steps` must show. */
export function check(transcript: Entry[]): void {
  const by = Object.fromEntries(transcript.map((e) => [e.id, e as Any]))
  expect(transcript.map((e) => e.id)).toEqual(steps.map((s) => s.id))

  for (const tool of by.list.tools) {
    expect(tool.inputSchema, tool.name).toMatchObject({ type: 'object', additionalProperties: false })
    expect(tool.outputSchema?.type, tool.name).toBe('object')
  }
  const ok = ['open', 'long', 'write', 'edit', 'read', 'search', 'find', 'failing', 'long-read', 'run', 'commit', 'dirty', 'untracked', 'changes', 'export', 'long-wait', 'long-end', 'close']
  for (const id of ok) {
    expect(by[id].result?.isError, `${id}: ${JSON.stringify(by[id])}`).toBe(false)
    // The text part is the structured result, serialized.
    expect(JSON.parse(text(by[id])), id).toEqual(by[id].result.structuredContent)
  }
  expect(text(by['none-open'])).toMatch(/^NO_SESSION: no session is open: open one with session_open/)
  expect(by.open.result.structuredContent.session).toMatch(/^clients-[0-9a-f]{6}$/)
  expect(by.write.result.structuredContent).toEqual({ path: 'notes/hello.txt', bytes: 20, created: true })
  expect(by.read.result.structuredContent.content).toBe('hello from every client\n')
  expect(by.search.result.structuredContent.matches).toEqual([{ path: 'notes/hello.txt', line: 1, text: 'hello from every client' }])
  expect(by.find.result.structuredContent.files).toEqual(['notes/hello.txt'])
  expect(by.failing.result.structuredContent).toMatchObject({ status: 'exited', exitCode: 3, output: [{ stream: 'stderr', text: 'oops' }] })
  expect(by['unknown-arg'].result.isError).toBe(true)
  expect(text(by['unknown-arg'])).toMatch(/^INVALID_ARGUMENT: run_command: unknown argument 'timeout' \(run_command takes session, command, cwd, timeoutMs, waitMs, background, tty, cols, rows\)/)

  // The long command: started in the background, read while it runs, then waited for in
  // two calls each under the clients' 60 s; the lines read follow on without a gap.
  expect(by.long.result.structuredContent).toMatchObject({ status: 'running', running: true, commandId: 'cmd-1' })
  expect(by['long-read'].result.structuredContent).toMatchObject({ status: 'running', running: true })
  expect(outputOf(by['long-read']).length).toBeGreaterThan(0)
  const ends = [by['long-wait'], by['long-end']].map((e) => e.result.structuredContent)
  expect(ends[1]).toMatchObject({ status: 'exited', exitCode: 0, totalLines: LONG_SECONDS, nextOffset: LONG_SECONDS })
  const read = [by.long, by['long-read'], by['long-wait'], by['long-end']].flatMap(outputOf)
  expect(read).toEqual(Array.from({ length: LONG_SECONDS }, (_, i) => `tick ${i + 1}`))
  expect(by['long-wait'].progress.length).toBeGreaterThan(0)
  for (const e of [by['long-wait'], by['long-end']]) expect(e.ms).toBeLessThan(55_000)

  expect(by.run.result.structuredContent).toMatchObject({ status: 'exited', exitCode: 0, timedOut: false })
  expect(outputOf(by.run)).toEqual(['1', '2', '3'])
  expect(by.run.progress.length).toBeGreaterThanOrEqual(1)
  expect(lines(by.run.progress)).toEqual(['1', '2', '3'].slice(0, lines(by.run.progress).length))
  const waited = (by.run.progress as Progress[]).map((p) => p.progress)
  expect(waited.every((p, i) => i === 0 || p > waited[i - 1])).toBe(true)
  expect((by.run.progress as Progress[]).every((p) => p.total === 45_000)).toBe(true)

  // The SDK's own timeout ran out before the command ended; cancelling kills the command.
  expect(by.slow.error.code).toBe('CLIENT_TIMEOUT')
  expect(by.cancel).toMatchObject({ cancelled: true, notified: true })
  expect(lines(by.cancel.progress)[0]).toBe('started')

  expect(outputOf(by.commit)).toEqual(['committed'])
  const changes = by.changes.result.structuredContent
  expect(changes.commits.map((c: Any) => c.summary)).toEqual(['add hello'])
  expect(changes.files).toEqual([{ path: 'notes/hello.txt', status: 'added', additions: 1, deletions: 0, binary: false }])
  expect(changes.uncommitted).toEqual([
    { path: 'src/app.js', status: ' M' },
    { path: 'scratch.txt', status: '??' },
  ])
  expect(changes.patch).toContain('+hello from every client')
  expect(changes.uncommittedPatch).toContain('-export const app = 1\n+export const app = 2')
  expect(changes.uncommittedPatch).toContain('+not committed')
  expect(changes.uncommittedPatch).not.toContain('hello from every client')
  const exported = by.export.result.structuredContent
  expect(exported.branch).toBe(`session/${by.open.result.structuredContent.session}`)
  expect(typeof exported.snapshot).toBe('string')

  // Protocol errors, as JSON-RPC 2.0 and MCP say.
  expect(by.malformed.response).toMatchObject({ id: 'raw-1', error: { code: -32700 } })
  expect(by['params-not-object'].response).toMatchObject({ id: 'raw-2', error: { code: -32600, message: 'invalid request: params must be an object' } })
  expect(by.batch.response).toMatchObject({ id: null, error: { code: -32600 } })
  expect(by['no-jsonrpc'].response).toMatchObject({ id: 'raw-4', error: { code: -32600 } })
  expect(by.discover.error).toMatchObject({ code: -32601 })
  expect(by['unknown-tool'].error).toMatchObject({ code: -32602, message: expect.stringContaining("unknown tool 'no_such_tool'") })
  expect(by['no-name'].error).toMatchObject({ code: -32602, message: expect.stringContaining('invalid params for tools/call: params.name') })

  expect(by.close.result.structuredContent).toEqual({ session: by.open.result.structuredContent.session, kept: false })
  expect(text(by['after-close'])).toMatch(/^NO_SESSION: /)
}
