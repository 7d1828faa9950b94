// The session relay against the engine's bridge network, in one process: a new connection
// (curl's own time for a request to a server on this machine, p50 of N) and a 200 MB
// download, from a session under an egress policy (no network, through the relay's HTTP
// proxy) and from a container on the engine's default bridge, where the engine has one.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { DOCKER, median, run, N } from './common.mjs'

const require = createRequire(import.meta.url)
const { Workspaces, DockerRuntime } = require('../lib/index.js')
const image = process.env.IMAGE ?? 'container-isolation-test:debian'
const MB = 200

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
  const loop = `for i in $(seq ${N + 3}); do curl -s -o /dev/null -w '%{time_total}\\n' ${url}/; done`
  const times = (await exec(loop)).trim().split('\n').slice(3).map((s) => Number(s) * 1000)
  const speed = Number(await exec(`curl -s -o /dev/null -w '%{speed_download}' ${url}/big`))
  return { p50: median(times), mbps: speed / 1e6 }
}

const rows = []
try {
  await workspaces.create({ projectDir: project, sessionId: `bench${process.pid}`, lifetime: 'process' })
  const env = await workspaces.environment(`bench${process.pid}`, 'bench')
  const inSession = async (command) => {
    const r = await env.shell.execute(command, { toolRequestId: `b${Date.now()}` })
    return r.output.filter((l) => l.stream === 'stdout').map((l) => l.text).join('\n')
  }
  rows.push(['relay (egress policy, HTTP proxy)', await measure(inSession, `http://target.test:${port}`)])
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

console.log(`Egress: a request to a server on this machine (curl time_total, p50 of ${N}) and a ${MB} MB download`)
console.log('path'.padEnd(48), 'request p50'.padStart(12), 'download'.padStart(14))
for (const [name, m] of rows) {
  console.log(name.padEnd(48), `${m.p50.toFixed(2)} ms`.padStart(12), `${m.mbps.toFixed(0)} MB/s`.padStart(14))
}
if (rows.length === 3) {
  const [relay, , bridge] = rows.map((r) => r[1])
  console.log(`relay/bridge: request ${(relay.p50 / bridge.p50).toFixed(2)}x, download ${(relay.mbps / bridge.mbps).toFixed(2)}x`)
} else {
  console.log('the engine has no default bridge network: no direct row to compare with')
}
console.log('goals: request p50 <= 2 ms through the relay, download >= 150 MB/s')
