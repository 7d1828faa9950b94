// Per-command overhead of DockerShell.execute('true') against the seeds' approach (Magenta's
// DockerShell spawns `docker exec -w <cwd> <container> bash -c <command>`), on one container
// in one process: medians of N runs each, printed as a ratio.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { promisify } from 'node:util'

const require = createRequire(import.meta.url)
const { DockerRuntime, DockerShell } = require('../index.js')
const run = promisify(execFile)
const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker'
const N = Number(process.env.BENCH_N ?? 30)
const image = process.env.IMAGE ?? 'container-isolation-test:debian'

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
async function time(fn) {
  const samples = []
  for (let i = 0; i < 3; i++) await fn(-1 - i) // warm-up
  for (let i = 0; i < N; i++) {
    const t = process.hrtime.bigint()
    await fn(i)
    samples.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  return median(samples)
}

const runtime = new DockerRuntime({ image, baseDir: '/tmp/container-isolation-bench' })
const id = await runtime.create({ workingDirectory: '/tmp', mounts: [], lifetime: 'process' })
try {
  await runtime.start(id)
  const shell = new DockerShell({ container: id, cwd: '/tmp', threadId: 'bench' })
  const seeds = await time(() => run(DOCKER, ['exec', '-w', '/tmp', id, 'bash', '-c', 'true']))
  const ours = await time((i) => shell.execute('true', { toolRequestId: `bench-${i + 10}`, onOutput: () => {} }))
  const echoSeeds = await time(() => run(DOCKER, ['exec', '-w', '/tmp', id, 'bash', '-c', 'seq 1 1000']))
  const echoOurs = await time((i) => shell.execute('seq 1 1000', { toolRequestId: `bench-seq-${i + 10}`, onOutput: () => {} }))
  const rows = [
    ["execute('true')", seeds, ours],
    ["execute('seq 1 1000')", echoSeeds, echoOurs],
  ]
  console.log(`DockerShell per-command latency, median of ${N} (ms); seeds = docker exec CLI bash -c`)
  console.log('operation'.padEnd(24), 'seeds'.padStart(9), 'ours'.padStart(9), 'speed-up'.padStart(9))
  for (const [name, s, o] of rows) {
    console.log(name.padEnd(24), s.toFixed(1).padStart(9), o.toFixed(1).padStart(9), `${(s / o).toFixed(2)}x`.padStart(9))
  }
} finally {
  await runtime.remove(id)
}
