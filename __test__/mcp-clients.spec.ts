// `container-isolation mcp` driven by two real MCP client implementations: the TypeScript
// SDK's `Client` (mcp-drivers/driver.ts) and the official Python SDK's `ClientSession`
// (mcp-drivers/driver.py, in the .venv-mcp/ that scripts/python-mcp.sh makes). Both run one
// scenario (mcp-drivers/scenario.ts) side by side, each against a server of its own on the
// same project; each transcript is checked, then the two are compared with what varies
// between runs masked (mcp-drivers/normalise.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { engine, engineCli, gitProject, IMAGES, tempDir } from './helpers'
import { cliPath, containersOf } from './mcp-harness'
import { runTypeScriptDriver } from './mcp-drivers/driver'
import { normalise } from './mcp-drivers/normalise'
import { runPythonDriver } from './mcp-drivers/python'
import { check, steps, timingDependent } from './mcp-drivers/scenario'
import { canonicalJson, type DriverRun, type ServerCommand } from './mcp-drivers/steps'

const CLIENTS = { ts: runTypeScriptDriver, python: runPythonDriver } as const
type ClientName = keyof typeof CLIENTS

// A project each: both export into theirs, and what an export copies depends on what is there.
const projects = { ts: gitProject('mcp-clients-ts', { 'src/app.js': 'export const app = 1\n' }), python: gitProject('mcp-clients-py', { 'src/app.js': 'export const app = 1\n' }) }
const bases = { ts: tempDir('mcp-clients-ts'), python: tempDir('mcp-clients-py') }
const runs = new Map<ClientName, PromiseSettledResult<DriverRun>>()

/**
 * The server each client starts: the environment is what a user would configure for a
 * client (the SDKs add only HOME, PATH and a few others of their own).
 */
function serverCommand(project: string, base: string): ServerCommand {
  const env: Record<string, string> = { DOCKER_HOST: `unix://${engine.socketPath}` }
  for (const name of ['TMPDIR', 'CONTAINER_ISOLATION_AGENT']) if (process.env[name]) env[name] = process.env[name]!
  return { command: process.execPath, args: [cliPath, 'mcp', '--project', project, '--base-dir', base, '--image', IMAGES.debian], env }
}

beforeAll(async () => {
  const names = Object.keys(CLIENTS) as ClientName[]
  const settled = await Promise.allSettled(names.map((name) => CLIENTS[name](serverCommand(projects[name].path, bases[name].path), steps)))
  names.forEach((name, i) => runs.set(name, settled[i]))
}, 240_000)

afterAll(() => {
  for (const base of Object.values(bases)) {
    for (const id of containersOf(base.path)) engineCli('rm', '-f', id)
    base.cleanup()
  }
  for (const project of Object.values(projects)) project.cleanup()
})

/** A client's run, or its failure (a missing Python SDK names scripts/python-mcp.sh). */
function run(name: ClientName): DriverRun {
  const outcome = runs.get(name)
  if (!outcome) throw new Error(`the ${name} client did not run`)
  if (outcome.status === 'rejected') throw outcome.reason
  return outcome.value
}

describe('one scenario through two MCP client implementations', () => {
  it.each(Object.keys(CLIENTS) as ClientName[])('the %s client: every step answered as expected, nothing of the server left in the engine', (name) => {
    const { transcript, protocol, stderr } = run(name)
    try {
      check(transcript)
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- transcript\n${JSON.stringify(transcript, null, 1)}\n--- stderr\n${stderr}`)
    }
    expect(protocol.offered).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(protocol.negotiated).toBe('2025-11-25')
    // The server exited when its client closed, and took its session's container along.
    expect(containersOf(bases[name].path)).toEqual([])
  })

  it('the two transcripts agree on everything that does not vary between runs', () => {
    const ts = run('ts')
    const python = run('python')
    expect(python.protocol).toEqual(ts.protocol)
    // Each client has a project and base directory of its own: their paths are masked.
    const own = (name: ClientName, r: DriverRun) => JSON.parse(JSON.stringify(r.transcript).replaceAll(projects[name].path, '<project>').replaceAll(bases[name].path, '<base>'))
    const [a, b] = [normalise(own('ts', ts), timingDependent), normalise(own('python', python), timingDependent)]
    for (let i = 0; i < Math.max(a.length, b.length); i++) expect(b[i], steps[i]?.id).toEqual(a[i])
    expect(canonicalJson(b)).toBe(canonicalJson(a))
  })
})
