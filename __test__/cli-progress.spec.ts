// `up` shows a session's creation as it goes: on a terminal (a pty from script(1)) one
// line redrawn with `\r` (phase, bar, percent and bytes of a pull); plain lines when
// stderr is a pipe; nothing with --json. `prune` from the CLI.
import { spawn, spawnSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { engine, gitProject, isPodman, tempDir } from './helpers'
import { pushRandomImage, type Registry, startRegistry } from './registry'
import { startServedRegistry, type Stalling } from './served-registry'

const auth = { user: 'cli', password: `pw-${process.pid}` }
const home = tempDir('cli-progress-home')
const config = tempDir('cli-progress-docker-config')
const proj = gitProject('cli-progress-project')
const cliPath = `${__dirname}/../bin/container-isolation.js`
let registry: Registry
let served: Stalling
let image: string
let source: string

const env = () => ({
  ...process.env,
  CONTAINER_ISOLATION_HOME: home.path,
  DOCKER_CONFIG: config.path,
  DOCKER_HOST: `unix://${engine.socketPath}`,
})

const rmi = (ref: string) => spawnSync(isPodman ? 'podman' : 'docker', ['rmi', '-f', ref], { stdio: 'ignore' })
/** Run without blocking this process: the served registry answers from its event loop. */
function run(command: string, args: string[], extraEnv: Record<string, string> = {}) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { env: { ...env(), ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => (stdout += c))
    child.stderr.on('data', (c) => (stderr += c))
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}
const cli = (...args: string[]) => run(process.execPath, [cliPath, ...args])

beforeAll(async () => {
  registry = await startRegistry(auth)
  source = pushRandomImage(registry, auth, 'ci/cli:1', 3 << 20)
  // Served at 1 MiB/s: a pull of a few seconds, redrawn many times.
  served = await startServedRegistry(registry.host, auth, 'ci/cli', '1', { bytesPerSecond: 1 << 20 })
  image = `${served.host}/ci/cli:1`
}, 120_000)

afterAll(async () => {
  for (const s of ['pipe', 'json']) await cli('down', s)
  rmi(image)
  rmi(source)
  await served?.stop()
  await registry?.stop()
  for (const d of [home, config, proj]) d.cleanup()
})

describe('up progress', () => {
  it('on a terminal: one line redrawn with the phase, a bar, percent and bytes, cleared at the end', async () => {
    rmi(image)
    // The command line is fixed text; every value reaches it through the environment.
    const tty = await run(
      'script',
      ['-qfec', '"$CI_NODE" "$CI_CLI" up "$CI_PROJ" --session tty --image "$CI_IMAGE" --no-devcontainer', '/dev/null'],
      { CI_NODE: process.execPath, CI_CLI: cliPath, CI_PROJ: proj.path, CI_IMAGE: image },
    )
    expect(tty.status, tty.stdout).toBe(0)
    const frames = tty.stdout.split('\r\x1b[K').filter(Boolean)
    const pulls = frames.filter((f) => f.startsWith('pull '))
    expect(pulls.length).toBeGreaterThanOrEqual(3)
    expect(pulls.some((f) => /\[#*\.+\] \d{1,2}% [\d.]+ (KB|MB)\/3\.0 MB /.test(f))).toBe(true)
    expect(pulls.at(-1)).toMatch(/\[#{20}\] 100% 3\.0 MB\/3\.0 MB /)
    expect(frames.some((f) => f.startsWith('create ') && f.includes('starting container'))).toBe(true)
    expect(frames.at(-1)).toMatch(/^tty: running, /)
    expect(tty.stdout).not.toContain('\n[pull]')
    console.log(`[cli] tty: ${frames.length} frames, ${pulls.length} of the pull; e.g. ${JSON.stringify(pulls[Math.floor(pulls.length / 2)])}`)
  }, 60_000)

  it('piped: plain lines on stderr, at most one a second per stream plus the last; --json: nothing', async () => {
    // Its layers go with the last container made from it.
    expect((await cli('down', 'tty')).status).toBe(0)
    rmi(image)
    const piped = await cli('up', proj.path, '--session', 'pipe', '--image', image, '--no-devcontainer')
    expect(piped.status, piped.stderr).toBe(0)
    expect(piped.stderr).not.toContain('\r')
    const lines = piped.stderr.trim().split('\n')
    const pulls = lines.filter((l) => l.startsWith('[pull] '))
    expect(pulls.at(-1)).toMatch(/100% 3\.0 MB\/3\.0 MB$/)
    expect(pulls.length).toBeLessThanOrEqual(8)
    expect(lines).toContain(`[create] starting container ${lines.find((l) => l.startsWith('[create] creating'))!.split(' ').pop()}`)
    expect(piped.stdout).toMatch(/^pipe: running/)

    const json = await cli('up', proj.path, '--session', 'json', '--image', image, '--no-devcontainer', '--pull', 'always', '--json')
    expect(json.status, json.stderr).toBe(0)
    expect(json.stderr).toBe('')
    expect(JSON.parse(json.stdout).state).toBe('running')
    expect((await cli('up', proj.path, '--pull', 'sometimes')).status).toBe(2)
  }, 60_000)

  it('prune: --dry-run and --older-than from the CLI', async () => {
    const dry = await cli('prune', '--dry-run', '--older-than', '1h', '--json')
    expect(dry.status, dry.stderr).toBe(0)
    expect(JSON.parse(dry.stdout)).toEqual({ imagesRemoved: [], kept: [] })
    expect((await cli('prune', '--older-than', 'soon')).status).toBe(2)
    expect((await cli('prune')).stdout).toMatch(/^removed 0 image\(s\)\nkept 0 image\(s\)/)
  })
})
