// A new user's first MCP session: `npx container-isolation mcp` from the installed package,
// driven by the MCP SDK's own client over stdio — its tools listed, a session opened, one
// command run in it — and nothing of it left in the engine once the client has closed.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, expect, test } from 'vitest'
import { DockerRuntime } from 'container-isolation'

const home = mkdtempSync(join(tmpdir(), 'ci-consumer-mcp-'))
const project = join(home, 'project')
const baseDir = join(home, 'base')

afterAll(() => rmSync(home, { recursive: true, force: true }))

test('npx container-isolation mcp: tools listed, a command run in an isolated session, nothing left after', async () => {
  mkdirSync(project)
  writeFileSync(join(project, 'hello.txt'), 'hello from the host\n')
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=consumer', '-c', 'user.email=consumer@localhost', ...args], { cwd: project, stdio: 'ignore' })
  git('init', '-q')
  git('add', '.')
  git('commit', '-q', '-m', 'hello')

  const transport = new StdioClientTransport({
    command: 'npx',
    args: ['container-isolation', 'mcp', '--project', project, '--image', 'container-isolation-test:debian', '--base-dir', baseDir],
    stderr: 'ignore',
  })
  const client = new Client({ name: 'consumer', version: '1.0.0' })
  await client.connect(transport)

  const { tools } = await client.listTools()
  expect(tools.map((t) => t.name)).toContain('run_command')
  expect(tools.every((t) => t.inputSchema.type === 'object')).toBe(true)

  // A call before any session is open is told to open one; then calls without a session use it.
  const none = await client.callTool({ name: 'run_command', arguments: { command: 'true' } })
  expect(none.isError).toBe(true)
  expect((none.content as Array<{ text: string }>)[0].text).toMatch(/^NO_SESSION: /)
  const opened = await client.callTool({ name: 'session_open', arguments: { title: 'first session' } })
  expect(opened.isError).toBeFalsy()
  const result = await client.callTool({ name: 'run_command', arguments: { command: 'cat hello.txt && echo written > reply.txt && pwd' } })
  expect(result.isError).toBeFalsy()
  expect(result.structuredContent).toMatchObject({
    session: (opened.structuredContent as { session: string }).session,
    status: 'exited',
    exitCode: 0,
    output: [
      { stream: 'stdout', text: 'hello from the host' },
      { stream: 'stdout', text: '/workspace' },
    ],
  })
  const runtime = new DockerRuntime({ baseDir })
  expect(await runtime.list()).toHaveLength(1)

  await client.close()
  expect(await runtime.list()).toEqual([])
})
