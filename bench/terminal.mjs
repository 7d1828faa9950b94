// Terminals against the engine's own, in one process: the keystroke echo round trip (write
// a byte, see the terminal echo it) through `terminal()` next to `docker exec -it` of the
// same container (its CLI on a pseudo-terminal of `script`), and the output throughput of
// `cat` of a 100 MB file to the terminal next to `docker exec -t`. Medians of N each.
import { execFileSync, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DOCKER, median, table } from './common.mjs'

const require = createRequire(import.meta.url)
const { DockerRuntime } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'
const N = Number(process.env.BENCH_N ?? 200)
const MB = 100

const base = mkdtempSync(join(tmpdir(), 'ci-bench-terminal-'))
const runtime = new DockerRuntime({ image, baseDir: base })
const since = (t) => Number(process.hrtime.bigint() - t) / 1e6

/** Median round trip of `n` keystrokes: `send(byte)`, then wait until `seen()` grows. */
async function echoes(send, seen, n) {
  const samples = []
  for (let i = 0; i < n + 20; i++) {
    const before = seen()
    const t = process.hrtime.bigint()
    send(Buffer.from('x'))
    while (seen() === before) await new Promise((r) => setImmediate(r))
    if (i >= 20) samples.push(since(t))
  }
  return median(samples)
}

const id = await runtime.create({ image, workingDirectory: '/', mounts: [] })
try {
  await runtime.start(id)
  await runtime.exec(id, { command: ['sh', '-c', `head -c ${MB}M /dev/urandom > /tmp/big`] })

  const terminal = await runtime.terminal(id, { command: ['cat'], cols: 80, rows: 24 })
  let ours = 0
  terminal.onData((chunk) => (ours += chunk.length))
  const oursEcho = await echoes((b) => terminal.write(b), () => ours, N)
  await terminal.kill('SIGKILL')
  await terminal.wait()

  // Measured once the CLI has its terminal in raw mode (the container's READY has come):
  // before that, `script`'s own terminal echoes locally.
  const cli = spawn('script', ['-qfec', `${DOCKER} exec -it ${id} sh -c 'echo READY; exec cat'`, '/dev/null'], { stdio: ['pipe', 'pipe', 'ignore'] })
  let theirs = 0
  let said = ''
  cli.stdout.on('data', (chunk) => {
    theirs += chunk.length
    if (said.length < 64) said += chunk.toString('latin1')
  })
  while (!said.includes('READY')) await new Promise((r) => setTimeout(r, 10))
  const engineEcho = await echoes((b) => cli.stdin.write(b), () => theirs, N)
  cli.kill()

  const throughput = async () => {
    const t = process.hrtime.bigint()
    const cat = await runtime.terminal(id, { command: ['sh', '-c', 'stty raw; cat /tmp/big'], cols: 80, rows: 24 })
    let bytes = 0
    cat.onData((chunk) => (bytes += chunk.length))
    await cat.wait()
    return { ms: since(t), bytes }
  }
  const runs = []
  for (let i = 0; i < 3; i++) runs.push(await throughput())
  const oursCat = median(runs.map((r) => r.ms))
  const engineRuns = []
  for (let i = 0; i < 3; i++) {
    const t = process.hrtime.bigint()
    execFileSync(DOCKER, ['exec', '-t', id, 'sh', '-c', 'stty raw; cat /tmp/big'], { stdio: ['ignore', 'ignore', 'ignore'] })
    engineRuns.push(since(t))
  }
  const engineCat = median(engineRuns)
  table(`terminal (medians; echo of ${N} keystrokes, cat of ${MB} MB x3)`, [
    ['keystroke echo round trip', engineEcho, oursEcho],
    [`cat ${MB} MB to the terminal`, engineCat, oursCat],
  ], ['docker -it', 'ours'])
  console.log(`throughput: ours ${((MB * 1.048576) / (oursCat / 1000)).toFixed(0)} MB/s (${runs[0].bytes} bytes), docker exec -t ${((MB * 1.048576) / (engineCat / 1000)).toFixed(0)} MB/s`)
} finally {
  await runtime.remove(id).catch(() => {})
  rmSync(base, { recursive: true, force: true })
}
process.exit(0)
