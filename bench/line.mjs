// The direct line to the session agent against the agent's exec stream, each on a container
// of its own from one runtime, in one process (the second's agent is started with
// CONTAINER_ISOLATION_LINE=off); medians of N. File operations go through the agent
// (`hostAccess: false`), as a non-root user's always do. `bash -c true` alone is timed inside
// the container: the mean of a loop of 200. On this machine (a VM on 2 vCPUs) a wake-up that
// crosses to another process often costs a whole 4 ms tick, on either path, so the latency
// rows take LINE_N (default 200) samples and print the 10th percentile (the path's own cost)
// beside the median.
import { createRequire } from 'node:module'
import { median, table, time } from './common.mjs'

const require = createRequire(import.meta.url)
const { DockerRuntime, DockerShell, DockerFileIO, containerAccess } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'

const runtime = new DockerRuntime({ image, baseDir: '/tmp/container-isolation-bench' })
const create = async () => {
  const id = await runtime.create({ workingDirectory: '/tmp', mounts: [], lifetime: 'process' })
  await runtime.start(id)
  return id
}
const ids = [await create(), await create()]
try {
  const [direct, exec] = ids.map((container) => ({
    container,
    shell: new DockerShell({ container, cwd: '/tmp', threadId: 'bench' }),
    io: new DockerFileIO({ container, hostAccess: false }),
  }))
  await direct.shell.execute('true', { toolRequestId: 'start' })
  process.env.CONTAINER_ISOLATION_LINE = 'off'
  await exec.shell.execute('true', { toolRequestId: 'start' })
  delete process.env.CONTAINER_ISOLATION_LINE
  const lines = [await containerAccess(direct.container), await containerAccess(exec.container)]
  if (lines[0].line !== 'direct' || lines[1].line !== 'exec') {
    throw new Error(`expected the direct line and the exec stream, got ${JSON.stringify(lines)}`)
  }
  const run = (s, command) => (i) => s.execute(command, { toolRequestId: `b-${i + 10}`, onOutput: () => {} })
  const kb = 'x'.repeat(1024)
  await direct.io.writeFile('/tmp/kb.txt', kb)
  await exec.io.writeFile('/tmp/kb.txt', kb)
  const n = Number(process.env.LINE_N ?? 200)
  /** [p10, p50] of `n` runs of `fn(i)`, after three warm-up runs, the two paths interleaved. */
  const both = async (name, fn) => {
    const samples = { exec: [], direct: [] }
    for (let i = -3; i < n; i++) {
      for (const [label, s] of [['exec', exec], ['direct', direct]]) {
        const t = process.hrtime.bigint()
        await fn(s, i)
        if (i >= 0) samples[label].push(Number(process.hrtime.bigint() - t) / 1e6)
      }
    }
    const p10 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 10)]
    return [[name, median(samples.exec), median(samples.direct)], [name, p10(samples.exec), p10(samples.direct)]]
  }
  const rows = [
    await both("execute('true')", (s, i) => run(s.shell, 'true')(i)),
    await both('readFile 1 KB', (s) => s.io.readFile('/tmp/kb.txt')),
    await both('stat', (s) => s.io.stat('/tmp/kb.txt')),
    await both('writeFile 1 KB', (s, i) => s.io.writeFile(`/tmp/w${i & 7}`, kb)),
  ]
  table(`The session agent's line, median of ${n} (ms)`, rows.map(([p50]) => p50), ['exec', 'direct'])
  table(`The same, 10th percentile of ${n} (ms)`, rows.map(([, p10]) => p10), ['exec', 'direct'])
  const alone = await direct.shell.execute(
    's=$(date +%s%N); for i in $(seq 1 200); do bash -c true; done; e=$(date +%s%N); echo $(( (e - s) / 200 ))',
    { toolRequestId: 'alone' },
  )
  const bashAlone = Number(alone.output[0].text) / 1e6
  const [p50, p10] = rows[0].map((row) => row[2])
  console.log(
    `\nbash -c true alone in the container: ${bashAlone.toFixed(3)} ms (mean of 200); execute('true') over the direct line ${p50.toFixed(3)} ms p50, ${p10.toFixed(3)} ms p10 (+${(p10 - bashAlone).toFixed(3)} ms at p10; goal <= 0.3)`,
  )

  const size = 100 * 1024 * 1024
  const big = Buffer.alloc(size, 0x61)
  const rate = (ms) => `${((size / (1 << 20)) / (ms / 1000)).toFixed(0)} MiB/s`
  const throughput = []
  for (const [name, op] of [
    ['write 100 MB', (s) => (i) => s.io.writeFile(`/tmp/big${i & 1}.bin`, big)],
    ['read 100 MB', (s) => () => s.io.readBinaryFile('/tmp/big0.bin')],
  ]) {
    const [e, d] = [await time(op(exec), 5), await time(op(direct), 5)]
    throughput.push([name, e, d])
    console.log(`${name}: exec ${rate(e)}, direct ${rate(d)} (goal >= 1 GB/s)`)
  }
  table('100 MB through the agent, median of 5 (ms)', throughput, ['exec', 'direct'])
} finally {
  for (const id of ids) await runtime.remove(id)
}
