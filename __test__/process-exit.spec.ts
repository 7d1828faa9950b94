import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { IMAGES } from './helpers'

// A process that used the addon must exit by itself: no handle (engine connection,
// callback) may keep its event loop alive after its last line.
const script = `
const { DockerRuntime, DockerShell } = require(${JSON.stringify(join(__dirname, '..', 'index.js'))})
;(async () => {
  const runtime = new DockerRuntime({ image: ${JSON.stringify(IMAGES.debian)}, baseDir: process.argv[1] })
  const id = await runtime.create({ workingDirectory: '/', mounts: [], command: ['sh', '-c', 'echo job-line'] })
  await runtime.start(id)
  await runtime.logs(id, { follow: true, onLine: () => {} })
  const sandbox = await runtime.create({ workingDirectory: '/', mounts: [] })
  await runtime.start(sandbox)
  const result = await runtime.exec(sandbox, { command: ['echo', 'hi'] })
  const shell = new DockerShell({ container: sandbox, cwd: '/', threadId: 'exit-test' })
  await shell.execute('echo streamed', { toolRequestId: 'r1', onOutput: () => {}, onStart: () => {} })
  await runtime.remove(sandbox)
  await runtime.remove(id)
  console.log('LAST ' + result.stdout.trim())
})()
`

describe('process exit', () => {
  it('a node process that ran an exec, logs and a shell command exits within 1 s of its last line', async () => {
    const child = spawn(process.execPath, ['-e', script, `/tmp/ci-exit-${process.pid}`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let lastLineAt = 0
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('LAST')) lastLineAt ||= Date.now()
    })
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    const exitedAt = Date.now()
    expect(code).toBe(0)
    expect(output).toContain('LAST hi')
    expect(exitedAt - lastLineAt).toBeLessThan(1000)
  })
})
