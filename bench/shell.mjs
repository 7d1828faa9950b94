// Per-command overhead of DockerShell.execute against the seeds' approach (Magenta's
// DockerShell spawns `docker exec -w <cwd> <container> bash -c <command>`), on one container
// in one process: medians of N runs each, printed as ratios. Through the session agent (the
// default) and through engine execs (`agent: false`); then how soon the first line of output
// arrives, and the first command in a fresh container (the agent's start included).
import { createRequire } from 'node:module'
import { DOCKER, median, run, table, time, N } from './common.mjs'

const require = createRequire(import.meta.url)
const { DockerRuntime, DockerShell } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'

const runtime = new DockerRuntime({ image, baseDir: '/tmp/container-isolation-bench' })
const id = await runtime.create({ workingDirectory: '/tmp', mounts: [], lifetime: 'process' })
const since = (t) => Number(process.hrtime.bigint() - t) / 1e6
try {
  await runtime.start(id)
  const shell = new DockerShell({ container: id, cwd: '/tmp', threadId: 'bench' })
  const engineShell = new DockerShell({ container: id, cwd: '/tmp', threadId: 'bench', agent: false })
  const exec = (command) => run(DOCKER, ['exec', '-w', '/tmp', id, 'bash', '-c', command])
  const ours = (s, command) => (i) => s.execute(command, { toolRequestId: `b-${i + 10}`, onOutput: () => {} })
  const firstLine = async (s) => {
    const samples = []
    for (let i = 0; i < N + 3; i++) {
      const t = process.hrtime.bigint()
      let first
      await s.execute('echo x', { toolRequestId: `f-${i}`, onOutput: () => (first ??= since(t)) })
      if (i >= 3) samples.push(first)
    }
    return median(samples)
  }
  const seedsFirst = await time(() => exec('echo x'))
  table(`DockerShell per-command latency, median of ${N} (ms); seeds = docker exec CLI bash -c`, [
    ["execute('true') (agent)", await time(() => exec('true')), await time(ours(shell, 'true'))],
    ["execute('true') (engine exec)", await time(() => exec('true')), await time(ours(engineShell, 'true'))],
    ["execute('seq 1 1000') (agent)", await time(() => exec('seq 1 1000')), await time(ours(shell, 'seq 1 1000'))],
    ["first onOutput of 'echo x' (agent)", seedsFirst, await firstLine(shell)],
  ])
  const started = []
  for (let i = 0; i < 5; i++) {
    const fresh = await runtime.create({ workingDirectory: '/tmp', mounts: [], lifetime: 'process' })
    try {
      await runtime.start(fresh)
      const s = new DockerShell({ container: fresh, cwd: '/tmp', threadId: 'bench' })
      const t = process.hrtime.bigint()
      await s.execute('true', { toolRequestId: 'first' })
      started.push(since(t))
    } finally {
      await runtime.remove(fresh)
    }
  }
  console.log(`\nfirst execute('true') in a fresh container, agent start included: median ${median(started).toFixed(1)} ms of 5 (target <= 150)`)
} finally {
  await runtime.remove(id)
}
