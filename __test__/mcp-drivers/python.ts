// Runs driver.py (the Python SDK driver) as a child process in .venv-mcp/, the virtualenv
// scripts/python-mcp.sh makes: the steps in on stdin, the transcript out on stdout. A
// missing or stale virtualenv is a failure naming that script, never a silent skip.
import { spawn, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import type { DriverRun, ServerCommand, Step } from './steps'

const root = join(__dirname, '..', '..')
const python = join(root, '.venv-mcp', 'bin', 'python')
const driver = join(__dirname, 'driver.py')

/** Throws, naming scripts/python-mcp.sh, unless .venv-mcp/ is there and current. */
export function assertPythonSdk(): void {
  const check = spawnSync('bash', [join(root, 'scripts', 'python-mcp.sh'), '--check'], { encoding: 'utf8' })
  if (check.status !== 0) {
    throw new Error(`the Python MCP SDK is not installed, so the Python client cannot run: ${check.stderr.trim() || 'bash scripts/python-mcp.sh --check failed'}`)
  }
}

/** Runs `steps` against one server started as `server`, through the Python SDK's ClientSession. */
export async function runPythonDriver(server: ServerCommand, steps: Step[]): Promise<DriverRun> {
  assertPythonSdk()
  const child = spawn(python, [driver], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', resolve)
  })
  child.stdin.end(JSON.stringify({ server, steps }))
  const status = await exited
  if (status !== 0) throw new Error(`driver.py exited with ${status}:\n${stderr}`)
  const { transcript, protocol } = JSON.parse(stdout) as Omit<DriverRun, 'stderr'>
  return { transcript, protocol, stderr }
}
