// DockerShell.execute('true') and a 1 KB DockerFileIO.readFile through an engine on "another
// machine" (the remote-engine rig, scripts/remote-engine.mjs: a private dockerd in a network
// namespace of its own, over tcp+TLS and over ssh), next to the same through the local socket, in one
// process; medians of N. The rig is started and removed here; the machine's dockerd is only
// read from (the test image is copied into the rig). Each side takes its default paths: locally
// FileIO answers from the container's root on the host, remotely through the session agent.
import { createRequire } from 'node:module'
import { RemoteEngine } from '../scripts/remote-engine.mjs'
import { N, time } from './common.mjs'

const require = createRequire(import.meta.url)
const { DockerRuntime, DockerShell, DockerFileIO } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'

/** A container on `engine` with a 1 KB file in /tmp; the two calls timed; its removal. */
async function measure(engine) {
  const runtime = new DockerRuntime({ engine, image, baseDir: '/tmp/container-isolation-bench-remote' })
  const id = await runtime.create({ workingDirectory: '/tmp', mounts: [], lifetime: 'process' })
  try {
    await runtime.start(id)
    const shell = new DockerShell({ engine, container: id, cwd: '/tmp', threadId: 'bench' })
    const io = new DockerFileIO({ engine, container: id })
    await io.writeFile('/tmp/bench.txt', 'x'.repeat(1024))
    return {
      execute: await time((i) => shell.execute('true', { toolRequestId: `b-${i + 10}`, onOutput: () => {} })),
      readFile: await time(() => io.readFile('/tmp/bench.txt')),
    }
  } finally {
    await runtime.remove(id)
  }
}

const rig = await new RemoteEngine().start({ images: [image] })
try {
  const local = await measure({ socketPath: '/var/run/docker.sock' })
  const remote = await measure({ host: rig.tcpHost, tls: rig.tls })
  const ssh = await measure({ host: rig.sshHost, ssh: rig.ssh })
  console.log(`Through a remote engine over tcp+TLS (the rig, ${rig.tcpHost}) and over ssh, next to the local socket, median of ${N} (ms)`)
  console.log('operation'.padEnd(24), 'local'.padStart(9), 'tls'.padStart(9), 'ratio'.padStart(8), 'ssh'.padStart(9), 'ratio'.padStart(8))
  const fmt = (ms) => (ms < 1 ? ms.toFixed(3) : ms.toFixed(1)).padStart(9)
  const ratio = (ms, base) => `${(ms / base).toFixed(1)}x`.padStart(8)
  for (const [name, key] of [["execute('true')", 'execute'], ['readFile 1 KB', 'readFile']]) {
    console.log(name.padEnd(24), fmt(local[key]), fmt(remote[key]), ratio(remote[key], local[key]), fmt(ssh[key]), ratio(ssh[key], local[key]))
  }
} finally {
  await rig.cleanup()
}
