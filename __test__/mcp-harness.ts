// The MCP suites' harness: `container-isolation mcp` spawned by the SDK's own Client over
// StdioClientTransport, on a project of the suite's, with a base directory of its own; the
// client round trips timed per tool; what a server left in the engine found by its label.
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { engine, engineCli, tempDir } from './helpers'

/** The package's CLI. */
export const cliPath = join(__dirname, '..', 'bin', 'container-isolation.js')
const LABEL = 'dev.container-isolation.base-dir'

type Content = { type: string; text?: string }
export type ToolResult = { isError?: boolean; content: Content[]; structuredContent?: any; _meta?: Record<string, any> }
/** Where a tool error's code and fields are (`_meta`: clients check structuredContent against the outputSchema). */
export const ERROR_META = 'dev.container-isolation/error'

/** Each tool's client round trips, in ms. */
export const timings = new Map<string, number[]>()
/** Directories to remove when the suite ends. */
export const dirs: Array<{ cleanup: () => void }> = []
const servers: Server[] = []

export interface Server {
  client: Client
  transport: StdioClientTransport
  base: string
  stderr: () => string
  /** What the client reported as protocol errors (a progress notification it could not place). */
  errors: string[]
  call(name: string, args: Record<string, unknown>, opts?: Parameters<Client['callTool']>[2]): Promise<ToolResult>
}

export const text = (r: ToolResult) => r.content.map((c) => c.text ?? '').join('\n')

/** A server on `project`, with its own base directory, and a client connected to it. */
export async function startServer(project: string, args: string[], capabilities: Record<string, unknown> = {}, baseDir?: string): Promise<Server> {
  const base = baseDir ? { path: baseDir } : tempDir('mcp-base')
  if (!baseDir) dirs.push(base as { path: string; cleanup: () => void })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, 'mcp', '--project', project, '--base-dir', base.path, ...args],
    env: { ...(process.env as Record<string, string>), DOCKER_HOST: `unix://${engine.socketPath}` },
    stderr: 'pipe',
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk) => (stderr += chunk))
  const client = new Client({ name: 'mcp-spec', version: '1.0.0' }, { capabilities })
  const errors: string[] = []
  await client.connect(transport)
  client.onerror = (err) => errors.push(err.message)
  const server: Server = {
    client,
    transport,
    base: base.path,
    stderr: () => stderr,
    errors,
    async call(name, toolArgs, opts) {
      const started = performance.now()
      const result = (await client.callTool({ name, arguments: toolArgs }, undefined, opts)) as ToolResult
      const list = timings.get(name) ?? []
      list.push(performance.now() - started)
      timings.set(name, list)
      return result
    },
  }
  servers.push(server)
  return server
}

/** The ids of the engine's containers of a server's base directory, stopped ones too. */
export const containersOf = (base: string) => engineCli('ps', '-aq', '--filter', `label=${LABEL}=${base}`).split('\n').filter(Boolean)

/** Closes the client; resolves how long until the server process had exited. */
export async function closeAndTime(server: Server): Promise<number> {
  const pid = server.transport.pid
  const started = performance.now()
  await server.client.close()
  while (pid && alive(pid)) await new Promise((r) => setTimeout(r, 20))
  return performance.now() - started
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Every server closed, its containers removed, the directories removed. */
export async function closeServers(): Promise<void> {
  for (const s of servers) await s.client.close().catch(() => {})
  for (const s of servers) for (const id of containersOf(s.base)) engineCli('rm', '-f', id)
  dirs.forEach((d) => d.cleanup())
}
