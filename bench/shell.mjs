// Per-command overhead of DockerShell.execute('true') against the seeds' approach (Magenta's
// DockerShell spawns `docker exec -w <cwd> <container> bash -c <command>`), on one container
// in one process: medians of N runs each, printed as a ratio.
import { createRequire } from 'node:module'
import { DOCKER, run, table, time, N } from './common.mjs'

const require = createRequire(import.meta.url)
const { DockerRuntime, DockerShell } = require('../index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'

const runtime = new DockerRuntime({ image, baseDir: '/tmp/container-isolation-bench' })
const id = await runtime.create({ workingDirectory: '/tmp', mounts: [], lifetime: 'process' })
try {
  await runtime.start(id)
  const shell = new DockerShell({ container: id, cwd: '/tmp', threadId: 'bench' })
  const seeds = await time(() => run(DOCKER, ['exec', '-w', '/tmp', id, 'bash', '-c', 'true']))
  const ours = await time((i) => shell.execute('true', { toolRequestId: `bench-${i + 10}`, onOutput: () => {} }))
  const echoSeeds = await time(() => run(DOCKER, ['exec', '-w', '/tmp', id, 'bash', '-c', 'seq 1 1000']))
  const echoOurs = await time((i) => shell.execute('seq 1 1000', { toolRequestId: `bench-seq-${i + 10}`, onOutput: () => {} }))
  table(`DockerShell per-command latency, median of ${N} (ms); seeds = docker exec CLI bash -c`, [
    ["execute('true')", seeds, ours],
    ["execute('seq 1 1000')", echoSeeds, echoOurs],
  ])
} finally {
  await runtime.remove(id)
}
