// DockerFileIO against the seeds' approach (Magenta's DockerFileIO runs the docker CLI:
// `docker exec <c> cat|tee|test|stat`), on one container, in one process; medians of N.
// Then the peak RSS growth of a 100 MB readFile, measured in a fresh child process.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DOCKER, run, table, time, N } from './common.mjs'

const require = createRequire(import.meta.url)
const { DockerRuntime, DockerFileIO } = require('../index.js')
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

  // Peak RSS of a 100 MB readFile, in a fresh process so nothing else is counted.
  const size = 100 * 1024 * 1024
  await io.writeFile('/tmp/big.bin', Buffer.alloc(size, 0x61))
  const probe = `
    const { DockerFileIO } = require(${JSON.stringify(join(process.cwd(), 'index.js'))})
    ;(async () => {
      const io = new DockerFileIO({ container: process.argv[1] })
      await io.stat('/tmp/big.bin')
      const before = process.resourceUsage().maxRSS * 1024
      const data = process.argv[2] === 'binary' ? await io.readBinaryFile('/tmp/big.bin') : await io.readFile('/tmp/big.bin')
      const after = process.resourceUsage().maxRSS * 1024
      console.log(JSON.stringify({ length: data.length, growth: after - before }))
    })()`
  console.log(`\n100 MB readFile, peak RSS growth of the Node process (target < 2.5x the file):`)
  for (const mode of ['utf8', 'binary']) {
    const out = spawnSync(process.execPath, ['-e', probe, id, mode], { encoding: 'utf8' })
    const { length, growth } = JSON.parse(out.stdout)
    console.log(`  ${mode === 'binary' ? 'readBinaryFile' : 'readFile'}: ${(growth / 2 ** 20).toFixed(0)} MiB for ${(length / 2 ** 20).toFixed(0)} MiB = ${(growth / size).toFixed(2)}x`)
  }
} finally {
  await runtime.remove(id)
  rmSync(folder, { recursive: true, force: true })
}
