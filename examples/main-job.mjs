// The main job, end to end: a container from the Debian test image with a host folder
// mounted at /workspace, a command run in it, its output printed, and the container removed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { DockerRuntime, detectEngine } = require('../index.js')

const image = process.env.IMAGE ?? 'container-isolation-test:debian'
const folder = mkdtempSync(join(tmpdir(), 'container-isolation-demo-'))
writeFileSync(join(folder, 'hello.txt'), 'hello from the host\n')

const engine = await detectEngine()
console.log(`engine: ${engine.kind} ${engine.version} (API ${engine.apiVersion}) at ${engine.endpoint}`)

const runtime = new DockerRuntime({ image })
const id = await runtime.create({
  id: 'demo',
  workingDirectory: '/workspace',
  mounts: [{ source: folder, target: '/workspace' }],
  lifetime: 'process',
})
try {
  let t = Date.now()
  await runtime.start(id)
  console.log(`container ${id} from ${image} started in ${Date.now() - t} ms`)
  t = Date.now()
  const result = await runtime.exec(id, {
    command: ['bash', '-c', 'cat hello.txt; uname -sr; echo "written in the container" > reply.txt; ls -la'],
  })
  console.log(`exec exited ${result.exitCode} in ${Date.now() - t} ms; its output:`)
  process.stdout.write(result.stdout.replace(/^/gm, '  | '))
  if (result.stderr) process.stdout.write(result.stderr.replace(/^/gm, '  ! '))
  console.log(`host sees reply.txt: ${JSON.stringify(readFileSync(join(folder, 'reply.txt'), 'utf8'))}`)
  console.log(`host path of /workspace/reply.txt: ${runtime.translateToHost('/workspace/reply.txt', id)}`)
} finally {
  const t = Date.now()
  await runtime.remove(id)
  console.log(`container ${id} removed in ${Date.now() - t} ms`)
  rmSync(folder, { recursive: true, force: true })
}
