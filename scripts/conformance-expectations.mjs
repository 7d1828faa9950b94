#!/usr/bin/env node
// Writes tests/devcontainer-corpus/<set>/<n>/expected.json: what the reference CLI
// (@devcontainers/cli, installed from npm into a temporary folder) reads from each corpus
// entry with `devcontainer read-configuration`, machine-specific paths replaced by
// placeholders. Run by hand when the corpus or the reference version changes:
//   node scripts/conformance-expectations.mjs [version]
import { execFileSync, execFile } from 'node:child_process'
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ENV, entries, folderPairs, layOut, normalise, removeRoot, workspaceRoot } from './conformance/corpus.mjs'

const VERSION = process.argv[2] ?? '0.89.0'
const PARALLEL = 2

const tools = mkdtempSync(join(tmpdir(), 'ci-reference-cli-'))
const root = workspaceRoot()
try {
  execFileSync('npm', ['install', '--prefix', tools, '--no-audit', '--no-fund', '--no-save', `@devcontainers/cli@${VERSION}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const cli = join(tools, 'node_modules', '@devcontainers', 'cli', 'devcontainer.js')
  // read-configuration lists the folder's existing containers; it must see none, and never
  // reach an engine.
  const docker = join(tools, 'docker')
  writeFileSync(docker, '#!/bin/sh\nexit 0\n')
  chmodSync(docker, 0o755)

  const read = (folder) =>
    new Promise((done, fail) => {
      const args = [cli, 'read-configuration', '--workspace-folder', folder, '--docker-path', docker]
      execFile(process.execPath, args, { env: ENV, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
        if (err) return done({ error: (stderr || err.message).trim().split('\n').pop() })
        try {
          done(JSON.parse(stdout))
        } catch (e) {
          fail(new Error(`${folder}: ${e.message}`))
        }
      })
    })

  const queue = entries()
  let written = 0
  const worker = async () => {
    for (let entry = queue.shift(); entry; entry = queue.shift()) {
      const folder = layOut(entry, root)
      const out = await read(folder)
      const expected = out.error
        ? { reference: `@devcontainers/cli@${VERSION}`, error: normalise(out.error, folderPairs(folder)) }
        : {
            reference: `@devcontainers/cli@${VERSION}`,
            configuration: normalise({ ...out.configuration, configFilePath: undefined }, pairs(folder, out)),
            workspace: normalise(out.workspace, pairs(folder, out)),
          }
      writeFileSync(join(entry.dir, 'expected.json'), JSON.stringify(expected, null, 1) + '\n')
      written++
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker))
  console.log(`conformance-expectations: ${written} expected.json written (@devcontainers/cli@${VERSION})`)
} finally {
  removeRoot(root)
  removeRoot(tools)
}

/** The folder's paths, the reference's devcontainerId (52 base-32 digits) and the host environment. */
function pairs(folder, out) {
  const id = JSON.stringify(out).match(/\b[0-9a-v]{52}\b/)?.[0]
  return [...folderPairs(folder), [id, '${devcontainerId}'], [ENV.PATH, '${localEnv:PATH}'], [ENV.HOME, '${localEnv:HOME}']]
}
