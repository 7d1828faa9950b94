// The direct line to the session agent against the agent's exec stream, each on a container
// of its own from one runtime, in one process (the second's agent is started with
// CONTAINER_ISOLATION_LINE=off); medians of N. File operations go through the agent
// (`hostAccess: false`), as a non-root user's always do. `bash -c true` alone is timed inside
// the container: the mean of a loop of 200.
import { createRequire } from 'node:module'
import { N, table, time } from './common.mjs'

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
  table(
    `The session agent's line, median of ${N} (ms)`,
    [
      ["execute('true')", await time(run(exec.shell, 'true')), await time(run(direct.shell, 'true'))],
      ['readFile 1 KB', await time(() => exec.io.readFile('/tmp/kb.txt')), await time(() => direct.io.readFile('/tmp/kb.txt'))],
      ['stat', await time(() => exec.io.stat('/tmp/kb.txt')), await time(() => direct.io.stat('/tmp/kb.txt'))],
      ['writeFile 1 KB', await time((i) => exec.io.writeFile(`/tmp/w${i}`, kb)), await time((i) => direct.io.writeFile(`/tmp/w${i}`, kb))],
    ],
    ['exec', 'direct'],
  )
  const alone = await direct.shell.execute(
    's=$(date +%s%N); for i in $(seq 1 200); do bash -c true; done; e=$(date +%s%N); echo $(( (e - s) / 200 ))',
    { toolRequestId: 'alone' },
  )
  const bashAlone = Number(alone.output[0].text) / 1e6
  const directTrue = await time(run(direct.shell, 'true'))
  console.log(
    `\nbash -c true alone in the container: ${bashAlone.toFixed(3)} ms; execute('true') over the direct line ${directTrue.toFixed(3)} ms (+${(directTrue - bashAlone).toFixed(3)} ms; goal <= 0.3)`,
  )

  const size = 100 * 1024 * 1024
  const big = Buffer.alloc(size, 0x61)
  const rate = (ms) => `${((size / (1 << 20)) / (ms / 1000)).toFixed(0)} MiB/s`
  const rows = []
  for (const [name, op] of [
    ['write 100 MB', (s) => (i) => s.io.writeFile(`/tmp/big${i & 1}.bin`, big)],
    ['read 100 MB', (s) => () => s.io.readBinaryFile('/tmp/big0.bin')],
  ]) {
    const [e, d] = [await time(op(exec), 5), await time(op(direct), 5)]
    rows.push([name, e, d])
    console.log(`${name}: exec ${rate(e)}, direct ${rate(d)} (goal >= 1 GB/s)`)
  }
  table('100 MB through the agent, median of 5 (ms)', rows, ['exec', 'direct'])
} finally {
  for (const id of ids) await runtime.remove(id)
}
