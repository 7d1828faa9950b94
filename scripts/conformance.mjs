#!/usr/bin/env node
// The conformance run (part of `npm test`, after the addon build): every devcontainer.json
// of tests/devcontainer-corpus read with our readDevcontainerConfig (the built addon, through
// lib/index.js) and compared, field by field, with what the reference CLI read from it
// (expected.json, see scripts/conformance-expectations.mjs). Differences listed in
// tests/devcontainer-corpus/known-differences.json (entry, field, reason; entry "*" for
// every entry) pass; any other difference, or a listed one that no longer occurs, fails.
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { differences } from './conformance/compare.mjs'
import { CORPUS, ENV, entries, folderPairs, layOut, normalise, removeRoot, workspaceRoot } from './conformance/corpus.mjs'

const require = createRequire(import.meta.url)
const { readDevcontainerConfig } = require('../lib/index.js')

const known = JSON.parse(readFileSync(join(CORPUS, 'known-differences.json'), 'utf8'))
const seen = new Map()
/** The known difference's index, counted as seen, or -1. */
const knownIndex = (entry, field) => {
  const i = known.findIndex((k) => (k.entry === entry || k.entry === '*') && k.field === field)
  if (i >= 0) seen.set(i, (seen.get(i) ?? 0) + 1)
  return i
}

// Both readers see only this host environment.
for (const key of Object.keys(process.env)) if (!(key in ENV)) delete process.env[key]
Object.assign(process.env, ENV)

const root = workspaceRoot()
let equal = 0
let failed = 0
const all = entries()
try {
  for (const entry of all) {
    const folder = layOut(entry, root)
    const id = createHash('sha256').update(folder).digest('hex').slice(0, 32)
    const pairs = [...folderPairs(folder), [id, '${devcontainerId}'], [ENV.PATH, '${localEnv:PATH}'], [ENV.HOME, '${localEnv:HOME}']]
    const ours = await readDevcontainerConfig(folder).then(
      (config) => normalise(config ?? { error: 'no devcontainer.json found' }, pairs),
      (err) => ({ error: normalise(`${err.code}: ${err.message}`, pairs) }),
    )
    const expected = JSON.parse(readFileSync(join(entry.dir, 'expected.json'), 'utf8'))
    const found = differences(expected, ours)
    if (found.length === 0) equal++
    for (const d of found) {
      const i = knownIndex(entry.id, d.field)
      if (i < 0) failed++
      const mark = i < 0 ? 'DIFFERS' : `known[${i}]`
      console.log(`${mark} ${entry.id} ${d.field}: reference ${JSON.stringify(d.expected)}, ours ${JSON.stringify(d.actual)}`)
    }
  }
} finally {
  removeRoot(root)
}
known.forEach((k, i) => {
  const count = seen.get(i) ?? 0
  console.log(`known[${i}] ${k.entry} ${k.field}: ${count} file(s). ${k.reason}`)
})
const stale = known.filter((_, i) => !seen.has(i))
for (const k of stale) console.log(`STALE known difference no longer seen: ${k.entry} ${k.field}`)
console.log(`conformance: ${equal} of ${all.length} files equal`)
if (failed > 0 || stale.length > 0) {
  console.log(`conformance: FAIL, ${failed} unexpected difference(s), ${stale.length} stale known difference(s)`)
  process.exit(1)
}
console.log('conformance: every difference is a known one')
