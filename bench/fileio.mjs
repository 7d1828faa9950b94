// DockerFileIO against the seeds' approach (Magenta's DockerFileIO runs the docker CLI:
// `docker exec <c> cat|tee|test|stat`), on one container, in one process; medians of N.
// Then the peak RSS growth of a 100 MB read, measured in a fresh child process.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DOCKER, run, table, time, N } from './common.mjs'

const require = createRequire(import.meta.url)
const { DockerRuntime, DockerFileIO } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'

const seeds = {
  stat: (c, p) => run(DOCKER, ['exec', c, 'stat', '-c', '%Y %s', p]),
  exists: (c, p) => run(DOCKER, ['exec', c, 'test', '-e', p]).then(() => true, () => false),
  isDir: (c, p) => run(DOCKER, ['exec', c, 'test', '-d', p]).then(() => true, () => false),
  read: (c, p) => run(DOCKER, ['exec', c, 'cat', p], { maxBuffer: 1 << 30 }),
  write: (c, p, content) =>
    new Promise((resolve, reject) => {
      const child = spawn(DOCKER, ['exec', '-i', c, 'tee', p], { stdio: ['pipe', 'ignore', 'ignore'] })
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tee exited ${code}`))))
      child.stdin.end(content)
    }),
}

const folder = mkdtempSync(join(tmpdir(), 'container-isolation-bench-'))
const runtime = new DockerRuntime({ image, baseDir: '/tmp/container-isolation-bench' })
const id = await runtime.create({
  workingDirectory: '/workspace',
  mounts: [{ source: folder, target: '/workspace' }],
  lifetime: 'process',
})
try {
  await runtime.start(id)
  const io = new DockerFileIO({ container: id })
  const kb = 'x'.repeat(1024)
  await io.writeFile('/tmp/bench.txt', kb)
  writeFileSync(join(folder, 'bench.txt'), kb)

  const rows = []
  for (const [where, path] of [['container fs', '/tmp/bench.txt'], ['bind mount', '/workspace/bench.txt']]) {
    rows.push([`stat (${where})`, await time(() => seeds.stat(id, path)), await time(() => io.stat(path))])
    rows.push([`fileExists (${where})`, await time(() => seeds.exists(id, path)), await time(() => io.fileExists(path))])
    rows.push([`isDirectory (${where})`, await time(() => seeds.isDir(id, path)), await time(() => io.isDirectory(path))])
    rows.push([`readFile 1 KB (${where})`, await time(() => seeds.read(id, path)), await time(() => io.readFile(path))])
    rows.push([
      `writeFile 1 KB (${where})`,
      await time((i) => seeds.write(id, `${path}.seeds${i}`, kb)),
      await time((i) => io.writeFile(`${path}.ours${i}`, kb)),
    ])
  }
  table(`DockerFileIO latency, median of ${N} (ms); seeds = docker exec CLI cat/tee/test/stat`, rows)

  // The same on the container fs without the host path: through the session agent, and
  // through the engine's archive endpoints alone (the path before the agent).
  const viaAgent = new DockerFileIO({ container: id, hostAccess: false })
  const viaEngine = new DockerFileIO({ container: id, hostAccess: false, agent: false })
  await run(DOCKER, ['exec', id, 'sh', '-c', 'mkdir -p /tmp/many && cd /tmp/many && for i in $(seq 1 1000); do : > f$i; done'])
  const seedsList = () => run(DOCKER, ['exec', id, 'ls', '-A', '/tmp/many'])
  const agentRows = []
  for (const [name, io] of [['agent', viaAgent], ['engine', viaEngine]]) {
    agentRows.push([`stat (${name})`, await time(() => seeds.stat(id, '/tmp/bench.txt')), await time(() => io.stat('/tmp/bench.txt'))])
    agentRows.push([`readFile 1 KB (${name})`, await time(() => seeds.read(id, '/tmp/bench.txt')), await time(() => io.readFile('/tmp/bench.txt'))])
    agentRows.push([
      `writeFile 1 KB (${name})`,
      await time((i) => seeds.write(id, `/tmp/w.seeds${i}`, kb)),
      await time((i) => io.writeFile(`/tmp/w.${name}${i}`, kb)),
    ])
    agentRows.push([`readdir 1000 entries (${name})`, await time(seedsList), await time(() => io.readdir('/tmp/many'))])
  }
  table(`DockerFileIO on the container fs, no host path, median of ${N} (ms); seeds = docker exec CLI`, agentRows)

  // Peak RSS of a 100 MB read, each in a fresh process so that nothing else is counted:
  // through the engine (/tmp), through the host path (/workspace), and the seeds' `cat`.
  const size = 100 * 1024 * 1024
  const big = Buffer.alloc(size, 0x61)
  await io.writeFile('/tmp/big.bin', big)
  await io.writeFile('/workspace/big.bin', big)
  const probe = String.raw`
    const { execFile } = require('node:child_process')
    const { DockerFileIO } = require(${JSON.stringify(join(process.cwd(), 'lib/index.js'))})
    const [container, how, path] = process.argv.slice(1)
    const read = {
      readFile: (io) => io.readFile(path),
      readBinaryFile: (io) => io.readBinaryFile(path),
      'readBinaryFile-agent': (io) => io.readBinaryFile(path),
      seeds: () => new Promise((resolve, reject) => execFile(${JSON.stringify(DOCKER)}, ['exec', container, 'cat', path],
        { maxBuffer: 1 << 30 }, (err, stdout) => (err ? reject(err) : resolve(stdout)))),
    }[how]
    // Peak RSS of this process image: VmHWM restarts at exec, whereas getrusage's maxRSS
    // (process.resourceUsage) keeps the forking parent's peak, which is larger than ours.
    const peak = () => {
      const status = require('node:fs').readFileSync('/proc/self/status', 'utf8')
      const hwm = /VmHWM:\s+(\d+) kB/.exec(status)
      return (hwm ? Number(hwm[1]) : process.resourceUsage().maxRSS) * 1024
    }
    ;(async () => {
      const io = new DockerFileIO({ container, hostAccess: !how.endsWith('-agent') })
      await io.stat(path)
      const before = peak()
      const data = await read(io)
      const after = peak()
      console.log(JSON.stringify({ length: data.length, growth: after - before }))
    })()`
  // 100 MB through the agent: median throughput of N writes and N reads.
  const mb = size / 2 ** 20
  const writeMs = await time((i) => viaAgent.writeFile(`/tmp/big-agent${i % 2}.bin`, big))
  const readMs = await time(async () => {
    const back = await viaAgent.readBinaryFile('/tmp/big-agent0.bin')
    if (back.length !== size) throw new Error(`read ${back.length} bytes of ${size}`)
  })
  console.log(`\n100 MB through the agent, median of ${N}: writeFile ${(mb / (writeMs / 1000)).toFixed(0)} MB/s, readBinaryFile ${(mb / (readMs / 1000)).toFixed(0)} MB/s (target >= 200)`)

  console.log('\n100 MB read, peak RSS growth of the Node process (target < 2.5x the file; agent <= 1.1x):')
  for (const [how, path] of [
    ['readFile', '/tmp/big.bin'],
    ['readBinaryFile', '/tmp/big.bin'],
    ['readBinaryFile-agent', '/tmp/big.bin'],
    ['readFile', '/workspace/big.bin'],
    ['readBinaryFile', '/workspace/big.bin'],
    ['seeds', '/tmp/big.bin'],
  ]) {
    const out = spawnSync(process.execPath, ['-e', probe, id, how, path], { encoding: 'utf8' })
    const { length, growth } = JSON.parse(out.stdout)
    const name = how === 'seeds' ? 'seeds (docker exec cat)' : `${how} ${path}`
    console.log(`  ${name.padEnd(32)} ${(growth / 2 ** 20).toFixed(0).padStart(4)} MiB for ${(length / 2 ** 20).toFixed(0)} MiB = ${(growth / size).toFixed(2)}x`)
  }
} finally {
  await runtime.remove(id)
  rmSync(folder, { recursive: true, force: true })
}
