// KubernetesRuntime's exec and fileIO through the session agent in the Pod
// (docs/kubernetes.md): the agent delivered over the exec stream into the Pod's agent folder
// and spoken to over a second exec; a user per exec and per FileIO; the plain exec where the
// agent cannot serve (a Pod that runs as another user than root, an image without /bin/sh,
// `agent: false`), and why said when something only the agent can do is asked.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { ClusterDescription } from '../scripts/kube-cluster.mjs'
import { KubernetesRuntime } from '../index.js'

const cluster: ClusterDescription = JSON.parse(readFileSync(process.env.TEST_KUBE_CLUSTER_JSON!, 'utf8'))
const kubernetes = { kubeconfig: cluster.kubeconfig.session, namespace: cluster.namespace }
const baseDir = mkdtempSync(join(tmpdir(), 'kube-agent-'))
const image = 'container-isolation-test:debian'
const runtime = new KubernetesRuntime({ kubernetes, image, baseDir, pull: 'never' })
const plain = new KubernetesRuntime({ kubernetes, image, baseDir, pull: 'never', agent: false })
const made: string[] = []

async function sandbox(extra: Record<string, unknown> = {}): Promise<string> {
  const id = await runtime.create({ id: 'agent', workingDirectory: '/', mounts: [], ...extra })
  made.push(id)
  return id
}

afterAll(async () => {
  await Promise.all(made.map((id) => runtime.remove(id).catch(() => {})))
})

describe('KubernetesRuntime through the session agent', () => {
  it("runs each exec as the user it names, with the Pod's environment and its own", async () => {
    const id = await sandbox({ environment: { FROM_POD: 'p' } })
    const as = async (user: string | undefined) =>
      (await runtime.exec(id, { command: ['sh', '-c', 'echo "$(id -un) $(id -u):$(id -g) $HOME $FROM_POD $X"'], user, environment: { X: 'x y' } })).stdout
    expect(await as(undefined)).toBe('root 0:0 /root p x y\n')
    expect(await as('agent')).toBe('agent 1000:1000 /home/agent p x y\n')
    expect(await as('1000:1000')).toBe('agent 1000:1000 /home/agent p x y\n')
    await expect(runtime.exec(id, { command: ['true'], user: 'nobody-here' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    // No exec token rides on the command's environment: the agent marks the tree itself.
    const env = await runtime.exec(id, { command: ['/usr/bin/env'], environment: { ONLY: '1' }, environmentMode: 'replace' })
    expect(env.stdout).toBe('ONLY=1\n')
    // Delivered into the Pod's agent folder, root's alone.
    const agent = await runtime.exec(id, { command: ['stat', '-c', '%U %a %s', '/.container-isolation/agent'] })
    expect(agent.stdout).toMatch(/^root 700 \d{6,}\n$/)
  })

  it('a timeout kills the whole tree, a process that left the group too', async () => {
    const id = await sandbox()
    const started = Date.now()
    await expect(runtime.exec(id, { command: ['sh', '-c', 'setsid sleep 310 & sleep 311'], timeout: 1000 }))
      .rejects.toMatchObject({ code: 'TIMEOUT' })
    expect(Date.now() - started).toBeLessThan(4000)
    const left = async () =>
      (await runtime.exec(id, { command: ['sh', '-c', 'grep -l "^sleep 31" /proc/[0-9]*/cmdline 2>/dev/null | wc -l'] })).stdout.trim()
    await expect.poll(left, { timeout: 5000 }).toBe('0')
  })

  it('stdin in, 8 MiB out, and many execs at once over one agent', async () => {
    const id = await sandbox()
    const big = await runtime.exec(id, { command: ['head', '-c', String(8 << 20), '/dev/zero'] })
    expect(big.stdout.length).toBe(8 << 20)
    const echoed = await runtime.exec(id, { command: ['cat'], stdin: 'x'.repeat(100_000) })
    expect(echoed.stdout.length).toBe(100_000)
    const many = await Promise.all(
      Array.from({ length: 20 }, (_, i) => runtime.exec(id, { command: ['sh', '-c', `echo ${i}`] })),
    )
    expect(many.map((r) => r.stdout)).toEqual(Array.from({ length: 20 }, (_, i) => `${i}\n`))
  })

  it("fileIO: Magenta's FileIO on the Pod through its agent, as the user it names", async () => {
    const id = await sandbox({ workingDirectory: '/tmp' })
    const root = runtime.fileIO(id)
    const agent = runtime.fileIO(id, { user: 'agent', cwd: '/home/agent' })
    const bytes = Buffer.from([0, 1, 2, 255, 0x0a, 0xc3])
    await root.writeFile('rel.bin', bytes)
    expect(Buffer.compare(await root.readBinaryFile('/tmp/rel.bin'), bytes)).toBe(0)
    await agent.mkdir('a/b/c')
    await agent.writeFile('a/b/c/note.txt', 'hé\n')
    expect(await agent.readFile('/home/agent/a/b/c/note.txt')).toBe('hé\n')
    const owner = await runtime.exec(id, { command: ['stat', '-c', '%U', '/home/agent/a/b/c', '/home/agent/a/b/c/note.txt'] })
    expect(owner.stdout).toBe('agent\nagent\n')
    expect(await agent.readdir('a/b/c')).toEqual(['note.txt'])
    expect(await agent.stat('a/b/c/note.txt')).toEqual({ mtimeMs: expect.any(Number), size: 4 })
    expect(await agent.stat('absent')).toBeUndefined()
    expect(await agent.fileExists('a')).toBe(true)
    expect(await agent.isDirectory('a')).toBe(true)
    expect(await agent.isDirectory('a/b/c/note.txt')).toBe(false)
    await expect(agent.readFile('absent')).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(agent.readFile('a')).rejects.toMatchObject({ code: 'EISDIR' })
    await expect(agent.writeFile('/root/x', 'no')).rejects.toMatchObject({ code: 'EACCES' })
    await expect(agent.writeFile('absent/x', 'no')).rejects.toMatchObject({ code: 'ENOENT' })
    const big = Buffer.alloc(8 << 20, 7)
    await root.writeFile('/tmp/big', big)
    expect((await root.readBinaryFile('/tmp/big')).equals(big)).toBe(true)
    // A symlink the session planted resolves inside the Pod, never on the host.
    await runtime.exec(id, { command: ['ln', '-s', '/etc/hostname', '/tmp/link'] })
    expect((await root.readFile('/tmp/link')).trim()).toBe((await runtime.exec(id, { command: ['cat', '/etc/hostname'] })).stdout.trim())
    const nonRoot = await sandbox({ user: '1000:1000' })
    await expect(runtime.fileIO(nonRoot).readFile('/etc/hostname')).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining('runs as uid 1000'),
    })
    await expect(runtime.fileIO('agent-never-made').readFile('/x')).rejects.toMatchObject({ code: 'CONTAINER_NOT_FOUND' })
  })

  it('keeps the plain exec where the agent cannot serve, and says why a user per exec cannot be had', async () => {
    const nonRoot = await sandbox({ user: '1000:1000' })
    expect((await runtime.exec(nonRoot, { command: ['id', '-u'] })).stdout).toBe('1000\n')
    await expect(runtime.exec(nonRoot, { command: ['id'], user: 'root' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining('runs as uid 1000'),
    })
    const noShell = await sandbox({ image: 'container-isolation-test:noshell', command: ['/pause'] })
    await expect(runtime.exec(noShell, { command: ['/pause'], user: '1000' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining('/bin/sh'),
    })
    const id = await sandbox()
    await expect(plain.exec(id, { command: ['id'], user: 'agent' })).rejects.toMatchObject({
      code: 'UNSUPPORTED',
      message: expect.stringContaining('runs no session agent'),
    })
    expect((await plain.exec(id, { command: ['echo', 'plain'] })).stdout).toBe('plain\n')
  })

  it('starts a new agent after a stop and start, and after the agent was killed', async () => {
    const id = await sandbox()
    expect((await runtime.exec(id, { command: ['true'] })).exitCode).toBe(0)
    await runtime.stop(id, 2000)
    await runtime.start(id)
    expect((await runtime.exec(id, { command: ['echo', 'again'] })).stdout).toBe('again\n')
    await runtime.exec(id, { command: ['sh', '-c', 'pkill -KILL -f "^/.container-isolation/agent serve" || true'] }).catch(() => {})
    await expect.poll(async () => (await runtime.exec(id, { command: ['echo', 'back'] }).catch((e) => e)).stdout, { timeout: 20_000 }).toBe('back\n')
  })
})
