#!/usr/bin/env node
// The conformance run (part of `npm test`, after the addon build): every devcontainer.json
// of tests/devcontainer-corpus read with our readDevcontainerConfig (the built addon, through
// lib/index.js) and compared, field by field, with what the reference CLI read from it
// (expected.json, see scripts/conformance-expectations.mjs). Differences listed in
// tests/devcontainer-corpus/known-differences.json (entry, field, reason; entry "*" for
// every entry) pass; any other difference, or a listed one that no longer occurs, fails.
// Then every compose config of the corpus read with our readComposeProject and compared with
// what the reference compose reader read from it (expected-compose.json, see
// scripts/compose-expectations.mjs), its differences listed in known-compose-differences.json.
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { differences } from './conformance/compare.mjs'
import { composeDifferences } from './conformance/compose-compare.mjs'
import {
  CORPUS, ENV, composeFixtures, composePairs, entries, folderPairs, layOut, layOutFixture, normalise, removeRoot, workspaceRoot,
} from './conformance/corpus.mjs'

const require = createRequire(import.meta.url)
const { readComposeProject, readDevcontainerConfig } = require('../lib/index.js')

/** A list of known differences, and a counter of how often each was seen. */
function knownList(file) {
  const list = JSON.parse(readFileSync(join(CORPUS, file), 'utf8'))
  const seen = new Map()
  /** The known difference's index, counted as seen, or -1. */
  const index = (entry, field) => {
    const i = list.findIndex((k) => (k.entry === entry || k.entry === '*') && k.field === field)
    if (i >= 0) seen.set(i, (seen.get(i) ?? 0) + 1)
    return i
  }
  return { list, seen, index, file }
}
const known = knownList('known-differences.json')
const knownCompose = knownList('known-compose-differences.json')

/** Compose files are read under a trust that grants everything a trust can grant, so that
 * what is compared is the reading (what a session refuses is its unit tests'). */
const TRUST = {
  hostPaths: ['/'], privileged: true, capabilities: ['ALL'], securityOptions: true, devices: true,
  hostNamespaces: true, engineSocket: true, localEnv: ['*'],
}

// Both readers see only this host environment.
for (const key of Object.keys(process.env)) if (!(key in ENV)) delete process.env[key]
Object.assign(process.env, ENV)

const root = workspaceRoot()
let equal = 0
let failed = 0
let composeEqual = 0
let composeRead = 0
const all = entries()
/** Our readComposeProject of `folder` against the reference's reading in `entry.dir`. */
async function compareCompose(entry, folder) {
  composeRead++
  const plan = await readComposeProject(folder, { trust: TRUST }).then(
    (project) => normalise(project ?? { error: 'no compose config found' }, composePairs(folder)),
    (err) => ({ error: normalise(`${err.code}: ${err.message}`, composePairs(folder)) }),
  )
  const expected = JSON.parse(readFileSync(join(entry.dir, 'expected-compose.json'), 'utf8'))
  const found = composeDifferences(expected, plan)
  if (found.length === 0) composeEqual++
  for (const d of found) report(knownCompose, entry, d)
}
/** Prints one difference; counts it as a failure unless it is known. */
const report = (k, entry, d) => {
  const i = k.index(entry.id, d.field)
  if (i < 0) failed++
  const mark = i < 0 ? 'DIFFERS' : `${k.file === known.file ? 'known' : 'known-compose'}[${i}]`
  const where = d.service ? ` (${d.service})` : ''
  console.log(`${mark} ${entry.id} ${d.field}${where}: reference ${JSON.stringify(d.expected)}, ours ${JSON.stringify(d.actual)}`)
}
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
    for (const d of found) report(known, entry, d)
    if (existsSync(join(entry.dir, 'expected-compose.json'))) await compareCompose(entry, folder)
  }
  for (const fixture of composeFixtures()) await compareCompose(fixture, layOutFixture(fixture, root))
} finally {
  removeRoot(root)
}
const stale = []
for (const k of [known, knownCompose]) {
  k.list.forEach((d, i) => {
    console.log(`${k.file} [${i}] ${d.entry} ${d.field}: ${k.seen.get(i) ?? 0} time(s). ${d.reason}`)
    if (!k.seen.has(i)) stale.push(d)
  })
}
for (const k of stale) console.log(`STALE known difference no longer seen: ${k.entry} ${k.field}`)
console.log(`conformance: ${equal} of ${all.length} files equal`)
console.log(`conformance: ${composeEqual} of ${composeRead} compose configs (corpus and fixtures) read as the reference reads them`)
if (failed > 0 || stale.length > 0) {
  console.log(`conformance: FAIL, ${failed} unexpected difference(s), ${stale.length} stale known difference(s)`)
  process.exit(1)
}
console.log('conformance: every difference is a known one')
