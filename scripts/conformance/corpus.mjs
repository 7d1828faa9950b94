// The devcontainer.json corpus in tests/devcontainer-corpus/: its entries, each laid out in a
// temporary workspace folder as the reference CLI and the conformance run both read it, and
// the normalisation that makes their outputs comparable on any machine.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const CORPUS = resolve(dirname(fileURLToPath(import.meta.url)), '../../tests/devcontainer-corpus')

/** Every entry: `{ set, n, dir }`, in set then number order. */
export function entries() {
  const out = []
  for (const set of readdirSync(CORPUS).filter((s) => s.startsWith('devcontainers-')).sort()) {
    const numbers = readdirSync(join(CORPUS, set))
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => a - b)
    for (const n of numbers) out.push({ set, n, dir: join(CORPUS, set, String(n)), id: `${set}/${n}` })
  }
  return out
}

/** A temporary root for workspace folders; remove it with `rmSync(root, { recursive: true })`. */
export function workspaceRoot() {
  return mkdtempSync(join(tmpdir(), 'ci-conformance-'))
}

/**
 * The entry copied to `<root>/<set>-<n>` (its config, compose files), with a placeholder
 * where SOURCE.json says a Dockerfile existed. Returns the folder.
 */
export function layOut(entry, root) {
  const folder = join(root, `${entry.set}-${entry.n}`)
  mkdirSync(folder)
  cpSync(join(entry.dir, '.devcontainer'), join(folder, '.devcontainer'), { recursive: true })
  const source = JSON.parse(readFileSync(join(entry.dir, 'SOURCE.json'), 'utf8'))
  for (const file of source.dockerfiles ?? []) {
    if (!file.inSource) continue
    const placeholder = resolve(folder, '.devcontainer', file.as)
    if (!placeholder.startsWith(folder + '/')) continue
    mkdirSync(dirname(placeholder), { recursive: true })
    writeFileSync(placeholder, 'FROM scratch\n')
  }
  return folder
}

/** tests/compose-fixtures: small compose projects written for the reading's rules (merges,
 * interpolation, extends, profiles, dependencies) that the corpus's real files seldom use. */
export const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '../../tests/compose-fixtures')

/** Every compose fixture: `{ dir, id }`, by name. */
export function composeFixtures() {
  return readdirSync(FIXTURES)
    .sort()
    .map((name) => ({ dir: join(FIXTURES, name), id: `compose-fixtures/${name}` }))
}

/** The fixture copied whole to `<root>/<name>`. Returns the folder. */
export function layOutFixture(fixture, root) {
  const folder = join(root, fixture.id.split('/').pop())
  cpSync(fixture.dir, folder, { recursive: true })
  return folder
}

export function removeRoot(root) {
  rmSync(root, { recursive: true, force: true })
}

/** The host environment both readers see: only these, so `${localEnv:…}` reads the same. */
export const ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/home/conformance' }

/** Replaces every occurrence of each `[value, placeholder]` in the strings of `value`. */
export function normalise(value, pairs) {
  if (typeof value === 'string') {
    let s = value
    for (const [from, to] of pairs) if (from) s = s.split(from).join(to)
    return s
  }
  if (Array.isArray(value)) return value.map((v) => normalise(v, pairs))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [normalise(k, pairs), normalise(v, pairs)]))
  }
  return value
}

/** The machine-specific strings of a workspace folder, longest first. */
export function folderPairs(folder) {
  const base = folder.split('/').pop()
  return [
    [folder, '${localWorkspaceFolder}'],
    [base, '${localWorkspaceFolderBasename}'],
  ]
}

/** The same, and the temporary root the folder is in (a compose file may mount `..`). */
export function composePairs(folder) {
  return [...folderPairs(folder), [folder.slice(0, folder.lastIndexOf('/')), '${workspaceRoot}']]
}
