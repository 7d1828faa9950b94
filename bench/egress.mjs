// The session relay against the engine's bridge network, in one process: a new connection
// (curl's own time for a request to a server on this machine, p50 of 200) and a 200 MB
// download, from a session under an egress policy (no network, through the relay's HTTP
// proxy) whose relay's frames travel over the direct line, from one whose relay keeps its
// exec stream (CONTAINER_ISOLATION_LINE=off while it starts), and from a container on the
// engine's default bridge, where the engine has one.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { DOCKER, median, run } from './common.mjs'

const require = createRequire(import.meta.url)
const { Workspaces, DockerRuntime } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'
const MB = 200
// Requests per row: a new connection's time on this VM varies from one to the next.
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200)

// The target: a server of ours in its own process, on every address of this machine.
const server = spawn(process.execPath, ['-e', `
  const big = Buffer.alloc(1 << 20)
  require('node:http').createServer((req, res) => {
    if (req.url === '/big') {
      res.writeHead(200, { 'content-length': ${MB} * big.length })
      let left = ${MB}
      const more = () => { while (left > 0) { left--; if (!res.write(big)) return res.once('drain', more) } res.end() }
      return more()
    }
    res.end('ok')
  }).listen(0, '0.0.0.0', function () { console.log(this.address().port) })`], { stdio: ['ignore', 'pipe', 'inherit'] })
const port = Number(await new Promise((resolve) => server.stdout.once('data', resolve)))

const project = mkdtempSync(join(tmpdir(), 'bench-egress-'))
writeFileSync(join(project, 'README.md'), '# bench\n')
for (const args of [['init', '-q'], ['add', '.'], ['-c', 'user.name=b', '-c', 'user.email=b@e', 'commit', '-qm', 'i']]) {
  await run('git', args, { cwd: project })
}
const base = mkdtempSync(join(tmpdir(), 'bench-egress-base-'))
// A name, so that curl goes through the proxy (NO_PROXY keeps 127.0.0.1 direct).
const workspaces = new Workspaces({ baseDir: base, image, egress: { allow: ['127.0.0.1/32'], hosts: { 'target.test': ['127.0.0.1'] } } })
const runtime = new DockerRuntime({ image, baseDir: base })

/** curl's `time_total` of `n` sequential requests, and the speed of one download, in `exec`. */
async function measure(exec, url) {
  const loop = `for i in $(seq ${REQUESTS + 3}); do curl -s -o /dev/null -w '%{time_total}\\n' ${url}/; done`
  const times = (await exec(loop)).trim().split('\n').slice(3).map((s) => Number(s) * 1000)
  const speed = Number(await exec(`curl -s -o /dev/null -w '%{speed_download}' ${url}/big`))
  return { p50: median(times), mbps: speed / 1e6 }
}

const rows = []
/** A relayed session's row; `line` says which way its relay's frames must travel. */
async function relayed(line) {
  const sessionId = `bench${process.pid}${line}`
  if (line === 'exec') process.env.CONTAINER_ISOLATION_LINE = 'off'
  try {
    await workspaces.create({ projectDir: project, sessionId, lifetime: 'process' })
  } finally {
    delete process.env.CONTAINER_ISOLATION_LINE
  }
  const access = await workspaces.containerAccess(sessionId)
  if (access.relayLine !== line) throw new Error(`the relay of ${sessionId} is on '${access.relayLine}', not '${line}': ${access.relayReason}`)
  const env = await workspaces.environment(sessionId, 'bench')
  const inSession = async (command) => {
    const r = await env.shell.execute(command, { toolRequestId: `b${Date.now()}` })
    return r.output.filter((l) => l.stream === 'stdout').map((l) => l.text).join('\n')
  }
  const name = line === 'direct' ? 'relay over the direct line' : 'relay over its exec stream'
  rows.push([name, await measure(inSession, `http://target.test:${port}`)])
  await workspaces.destroy(sessionId)
}

try {
  await relayed('direct')
  await relayed('exec')
  const onHost = async (command) => (await run('bash', ['-c', command])).stdout
  rows.push(['this machine, no container', await measure(onHost, `http://127.0.0.1:${port}`)])

  // The engine's bridge: its default one, else a bridge network made for this run.
  let network = 'bridge'
  let made = false
  const gatewayOf = async (name) =>
    (await run(DOCKER, ['network', 'inspect', name, '-f', '{{range .IPAM.Config}}{{.Gateway}}{{end}}'])).stdout.trim()
  let gateway = await gatewayOf(network).catch(() => '')
  if (!gateway) {
    network = `ci-bench-${process.pid}`
    made = await run(DOCKER, ['network', 'create', '--driver', 'bridge', network]).then(() => true, () => false)
    gateway = made ? await gatewayOf(network).catch(() => '') : ''
  }
  if (gateway) {
    const id = await runtime.create({ workingDirectory: '/', mounts: [], network, lifetime: 'process' })
    try {
      await runtime.start(id)
      const onBridge = async (command) => (await runtime.exec(id, { command: ['bash', '-c', command] })).stdout
      rows.push([`engine bridge network '${network}' (direct)`, await measure(onBridge, `http://${gateway}:${port}`)])
    } finally {
      await runtime.remove(id)
    }
  }
  if (made) await run(DOCKER, ['network', 'rm', network]).catch(() => {})
} finally {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  server.kill()
  rmSync(project, { recursive: true, force: true })
  rmSync(base, { recursive: true, force: true })
}

console.log(`Egress: a request to a server on this machine (curl time_total, p50 of ${REQUESTS}) and a ${MB} MB download`)
console.log('path'.padEnd(48), 'request p50'.padStart(12), 'download'.padStart(14))
for (const [name, m] of rows) {
  console.log(name.padEnd(48), `${m.p50.toFixed(2)} ms`.padStart(12), `${m.mbps.toFixed(0)} MB/s`.padStart(14))
}
const by = Object.fromEntries(rows.map(([name, m]) => [name, m]))
const line = by['relay over the direct line']
const exec = by['relay over its exec stream']
console.log(`direct line/exec stream: request ${(line.p50 / exec.p50).toFixed(2)}x, download ${(line.mbps / exec.mbps).toFixed(2)}x`)
const bridge = rows.find(([name]) => name.startsWith('engine bridge'))?.[1]
if (bridge) {
  console.log(`relay (direct line)/bridge: request ${(line.p50 / bridge.p50).toFixed(2)}x, download ${(line.mbps / bridge.mbps).toFixed(2)}x`)
} else {
  console.log('the engine has no default bridge network: no direct row to compare with')
}
console.log('goals (issue 36): a relayed request <= 0.7 ms at p50, a download >= 1000 MB/s')
