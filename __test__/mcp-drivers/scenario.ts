// The scenario every MCP client drives (mcp-clients.spec.ts): its steps, and `check`, what
// each client's transcript must show. The assertions follow today's server loosely where
// issue 35 asks for a change (an unknown tool, a request without a name, a malformed
// line), taking either the present answer or the one the spec wants.
import { expect } from 'vitest'
import type { Entry, Progress, Step } from './steps'

const session = '${open.result.structuredContent.session}'

export const steps: Step[] = [
  { id: 'list', op: 'list' },
  { id: 'open', op: 'call', tool: 'session_open', args: { title: 'Clients' } },
  { id: 'write', op: 'call', tool: 'write_file', args: { session, path: 'notes/hello.txt', content: 'hello from a client\n' } },
  { id: 'read', op: 'call', tool: 'read_file', args: { session, path: 'notes/hello.txt' } },
  { id: 'run', op: 'call', tool: 'run_command', args: { session, command: 'for i in 1 2 3; do echo $i; sleep 0.3; done' }, progress: true },
  { id: 'slow', op: 'call', tool: 'run_command', args: { session, command: 'sleep 5' }, timeoutMs: 1000 },
  { id: 'cancel', op: 'cancel', tool: 'run_command', args: { session, command: 'echo started; sleep 30' }, after: { progress: 1 } },
  { id: 'malformed', op: 'raw', line: '{"jsonrpc":"2.0","id":"raw-1","method":' },
  { id: 'params-not-object', op: 'raw', line: '{"jsonrpc":"2.0","id":"raw-2","method":"tools/call","params":"read_file"}' },
  // What the Python SDK's high-level Client sends first (2026-07-28); an error answer makes it fall back to initialize.
  { id: 'discover', op: 'request', method: 'server/discover', params: {} },
  { id: 'unknown-tool', op: 'request', method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
  { id: 'no-name', op: 'request', method: 'tools/call', params: { arguments: {} } },
  { id: 'after-errors', op: 'call', tool: 'read_file', args: { session, path: 'notes/hello.txt' } },
  { id: 'close', op: 'call', tool: 'session_close', args: { session } },
]

type Any = Record<string, any>
const text = (entry: Any) => (entry.result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n')
const lines = (progress: Progress[]) => progress.map((p) => p.message ?? '').join('\n').split('\n')

/** What one client's transcript of `steps` must show. */
export function check(transcript: Entry[]): void {
  const by = Object.fromEntries(transcript.map((e) => [e.id, e as Any]))
  expect(transcript.map((e) => e.id)).toEqual(steps.map((s) => s.id))

  const names = (by.list.tools as Array<{ name: string; inputSchema: { type: string } }>).map((t) => t.name)
  expect(names).toEqual(expect.arrayContaining(['session_open', 'session_close', 'read_file', 'write_file', 'run_command']))
  for (const tool of by.list.tools) expect(tool.inputSchema.type, tool.name).toBe('object')

  for (const id of ['open', 'write', 'read', 'run', 'after-errors', 'close']) expect(by[id].result?.isError, `${id}: ${JSON.stringify(by[id])}`).toBe(false)
  expect(by.open.result.structuredContent.session).toMatch(/^clients-[0-9a-f]{6}$/)
  expect(text(by.read)).toContain('hello from a client')
  expect(text(by['after-errors'])).toContain('hello from a client')

  expect(by.run.result.structuredContent).toMatchObject({ exitCode: 0, timedOut: false })
  expect(text(by.run).split('\n').slice(1)).toEqual(['1', '2', '3'])
  expect(by.run.progress.length).toBeGreaterThanOrEqual(1)
  expect(lines(by.run.progress)).toEqual(['1', '2', '3'].slice(0, lines(by.run.progress).length))
  const counts = (by.run.progress as Progress[]).map((p) => p.progress)
  expect(counts).toEqual([...counts].sort((a, b) => a - b))

  // The SDK's own timeout ran out before the command ended.
  expect(by.slow.error.code).toBe('CLIENT_TIMEOUT')
  expect(by.cancel).toMatchObject({ cancelled: true, notified: true })
  expect(lines(by.cancel.progress)[0]).toBe('started')

  // Today: no answer / no answer / an isError result / -32603. Issue 35: -32700 / -32600 / -32602 / -32602.
  if (by.malformed.response !== null) expect(by.malformed.response).toMatchObject({ error: { code: -32700 } })
  if (by['params-not-object'].response !== null) expect(by['params-not-object'].response).toMatchObject({ id: 'raw-2', error: { code: -32600 } })
  expect(by.discover.error?.code, JSON.stringify(by.discover)).toBe(-32601)
  if (by['unknown-tool'].error) expect(by['unknown-tool'].error.code).toBe(-32602)
  else expect(by['unknown-tool'].result).toMatchObject({ isError: true })
  expect(typeof by['no-name'].error?.code, JSON.stringify(by['no-name'])).toBe('number')
}
