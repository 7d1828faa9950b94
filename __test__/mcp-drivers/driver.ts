// The TypeScript SDK driver: runs a step list (steps.ts) over one connection of the SDK's
// `Client` and `StdioClientTransport` to one server process, and returns the transcript.
// Raw lines go to the server's stdin through the transport's own child process; the
// server's stdout is read beside the SDK (to capture raw lines' answers, which the SDK is
// not shown, and to tell the server's JSON-RPC errors from the SDK's own).
import type { ChildProcess } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { StringDecoder } from 'node:string_decoder'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import type { CallResult, DriverRun, Entry, Progress, ServerCommand, Step, StepError } from './steps'
import { resolvePlaceholders } from './steps'

const RAW_ANSWER_MS = 5000
const DEFAULT_TIMEOUT_MS = 60_000
/** A result schema that takes any object: what the generic request path is given. */
const AnyResult = z.looseObject({})

type Wire = Record<string, unknown> & { id?: unknown; method?: string; error?: { code: number; message: string } }

/** Runs `steps` in order against one server started as `server`. */
export async function runTypeScriptDriver(server: ServerCommand, steps: Step[]): Promise<DriverRun> {
  const transport = new StdioClientTransport({ command: server.command, args: server.args, env: server.env, cwd: server.cwd, stderr: 'pipe' })
  let stderr = ''
  transport.stderr?.on('data', (chunk) => (stderr += chunk))
  const sent: Wire[] = []
  const send = transport.send.bind(transport)
  transport.send = (message) => {
    sent.push(message as Wire)
    return send(message)
  }
  let negotiated: string | null = null
  // The Client hands the negotiated version to a transport that takes it; stdio's does not.
  Object.assign(transport, { setProtocolVersion: (version: string) => (negotiated = version) })
  const client = new Client({ name: 'mcp-clients-ts', version: '1.0.0' })
  await client.connect(transport)
  const wire = new WireTap(transport)

  const entries = new Map<string, unknown>()
  const transcript: Entry[] = []
  try {
    for (const step of steps) {
      const started = performance.now()
      const before = sent.length
      let body: Record<string, unknown>
      try {
        body = await runStep(client, wire, resolvePlaceholders(step, entries) as Step, () => sent.slice(before))
      } catch (err) {
        body = { error: { code: 'DRIVER_PLACEHOLDER', message: (err as Error).message } }
      }
      const entry = { id: step.id, ...body, ms: Math.round(performance.now() - started) } as Entry
      transcript.push(entry)
      entries.set(step.id, entry)
    }
  } finally {
    await client.close()
  }
  const offered = (sent.find((m) => m.method === 'initialize')?.params as { protocolVersion?: string } | undefined)?.protocolVersion ?? null
  return { transcript, protocol: { offered, negotiated }, stderr }
}

async function runStep(client: Client, wire: WireTap, step: Step, sentSince: () => Wire[]): Promise<Record<string, unknown>> {
  const failed = (err: unknown) => ({ error: wire.classify(err, sentSince()) })
  switch (step.op) {
    case 'list':
      return { tools: (await client.listTools()).tools }
    case 'call': {
      const progress: Progress[] = []
      const onprogress = step.progress ? (p: { progress: number; total?: number; message?: string }) => progress.push(progressOf(p)) : undefined
      try {
        const result = await client.callTool({ name: step.tool, arguments: step.args ?? {} }, undefined, { onprogress, timeout: step.timeoutMs ?? DEFAULT_TIMEOUT_MS })
        return { result: callResult(result), progress }
      } catch (err) {
        return { ...failed(err), progress }
      }
    }
    case 'request':
      try {
        const request = { method: step.method, ...(step.params === undefined ? {} : { params: step.params }) }
        return { result: await client.request(request as never, AnyResult, { timeout: step.timeoutMs ?? DEFAULT_TIMEOUT_MS }) }
      } catch (err) {
        return failed(err)
      }
    case 'raw':
      return { response: await wire.raw(step.line) }
    case 'cancel':
      return cancel(client, wire, step, sentSince)
  }
}

/** A call aborted the SDK's way (AbortController) after n progress notifications or n ms. */
async function cancel(client: Client, wire: WireTap, step: Extract<Step, { op: 'cancel' }>, sentSince: () => Wire[]) {
  const controller = new AbortController()
  const progress: Progress[] = []
  const after = step.after
  const timer = 'ms' in after ? setTimeout(() => controller.abort('cancelled by the driver'), after.ms) : undefined
  const onprogress = (p: { progress: number; total?: number; message?: string }) => {
    progress.push(progressOf(p))
    if ('progress' in after && progress.length >= after.progress) controller.abort('cancelled by the driver')
  }
  try {
    const result = await client.callTool({ name: step.tool, arguments: step.args ?? {} }, undefined, { onprogress, signal: controller.signal, timeout: step.timeoutMs ?? DEFAULT_TIMEOUT_MS })
    return { result: callResult(result), progress }
  } catch (err) {
    if (!controller.signal.aborted) return { error: wire.classify(err, sentSince()), progress }
    const call = sentSince().find((m) => m.method === 'tools/call')
    const notified = sentSince().some((m) => m.method === 'notifications/cancelled' && (m.params as { requestId?: unknown })?.requestId === call?.id)
    return { cancelled: true, progress, notified }
  } finally {
    clearTimeout(timer)
  }
}

const progressOf = (p: { progress: number; total?: number; message?: string }): Progress => ({ progress: p.progress, total: p.total ?? null, message: p.message ?? null })

function callResult(result: Record<string, unknown>): CallResult {
  return { content: (result.content as unknown[]) ?? [], structuredContent: result.structuredContent ?? null, isError: result.isError === true }
}

/**
 * The server's stdout read beside the SDK: every JSON-RPC error the server sent (by id),
 * and the answers to raw lines, which are taken out of what the SDK is given.
 */
class WireTap {
  private readonly errors = new Map<unknown, { code: number; message: string }>()
  private readonly waiting = new Map<string, (message: Wire | null) => void>()
  /** The ids of the raw lines written (the SDK's own ids are numbers). */
  private readonly rawIds = new Set<string>()
  private buffer = ''
  private readonly decoder = new StringDecoder('utf8')

  constructor(private readonly transport: StdioClientTransport) {
    this.process.stdout?.on('data', (chunk: Buffer) => this.take(this.decoder.write(chunk)))
    const deliver = transport.onmessage
    transport.onmessage = (message: JSONRPCMessage) => {
      if (!this.isRawAnswer(message as Wire)) deliver?.call(transport, message)
    }
  }

  private get process(): ChildProcess {
    const child = (this.transport as unknown as { _process?: ChildProcess })._process
    if (!child) throw new Error('the transport has no server process')
    return child
  }

  private isRawAnswer(message: Wire): boolean {
    if (!('result' in message) && !('error' in message)) return false
    return message.id === null || message.id === undefined || (typeof message.id === 'string' && this.rawIds.has(message.id))
  }

  private take(text: string) {
    const lines = (this.buffer + text).split('\n')
    this.buffer = lines.pop() ?? ''
    for (const line of lines) {
      let message: Wire
      try {
        message = JSON.parse(line)
      } catch {
        continue
      }
      if (message.error && 'id' in message) this.errors.set(message.id, message.error)
      if (!this.isRawAnswer(message)) continue
      const key = message.id === null || message.id === undefined ? null : String(message.id)
      const waiter = key === null ? this.waiting.values().next().value : this.waiting.get(key)
      waiter?.(message)
    }
  }

  /** Writes `line` to the server's stdin; resolves its answer, or null after 5 s. */
  async raw(line: string): Promise<Wire | null> {
    const id = rawId(line)
    this.rawIds.add(id)
    const answered = new Promise<Wire | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), RAW_ANSWER_MS)
      this.waiting.set(id, (message) => {
        clearTimeout(timer)
        resolve(message)
      })
    })
    this.process.stdin?.write(`${line}\n`)
    try {
      return await answered
    } finally {
      this.waiting.delete(id)
    }
  }

  /** A thrown error as a StepError: the server's JSON-RPC error when it sent one for the step's requests. */
  classify(err: unknown, sent: Wire[]): StepError {
    for (const m of sent) {
      const error = m.method !== undefined && 'id' in m ? this.errors.get(m.id) : undefined
      if (error) return { code: error.code, message: error.message }
    }
    const message = err instanceof McpError ? err.message.replace(/^MCP error -?\d+: /, '') : String((err as Error)?.message ?? err)
    if (!sent.some((m) => m.method !== undefined && 'id' in m)) return { code: 'CLIENT_REQUEST', message }
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return { code: 'CLIENT_TIMEOUT', message }
    if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) return { code: 'CLIENT_CLOSED', message }
    return { code: 'CLIENT_VALIDATION', message }
  }
}

/** The id a raw line carries (read loosely: the line may be malformed), or '' when none. */
function rawId(line: string): string {
  return /"id"\s*:\s*"([^"]*)"/.exec(line)?.[1] ?? /"id"\s*:\s*(-?\d+)/.exec(line)?.[1] ?? ''
}
