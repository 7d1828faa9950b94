#!/usr/bin/env node
// The pack test: every platform package (`npm/<platform>`, one for each of the root's
// optionalDependencies) would publish a tarball holding its addon and both Linux session
// agents, each agent an ELF executable of its own machine type (x86-64, aarch64): a Mac's
// Docker Desktop runs linux/arm64 (or emulated linux/amd64) containers, so the darwin packages
// carry both, and so do the Linux ones. It asks `npm pack --dry-run --json` what each tarball
// would hold, and checks every file the package lists in `files` besides.
//
//   node scripts/check-packages.mjs            the packages in npm/ as they are (the release,
//                                              after the built files are copied in)
//   node scripts/check-packages.mjs --standins copies of them, with stand-in files made here:
//                                              64-byte ELF headers for the agents, a few bytes
//                                              for the addon (what `npm test` runs)
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const AGENTS = {
  'container-isolation-agent.linux-x64': { machine: 62, name: 'x86-64' },
  'container-isolation-agent.linux-arm64': { machine: 183, name: 'aarch64' },
}
const MACHINES = { 62: 'x86-64', 183: 'aarch64' }

/** The ELF header's e_machine of a 64-bit little-endian executable, else null. */
function elfMachine(bytes) {
  const elf = bytes.length >= 20 && bytes.subarray(0, 4).toString('latin1') === '\x7fELF'
  return elf && bytes[4] === 2 && bytes[5] === 1 ? bytes.readUInt16LE(18) : null
}

/** A 64-byte ELF64 little-endian header of an executable for `machine`. */
function elfHeader(machine) {
  const header = Buffer.alloc(64)
  header.write('\x7fELF', 0, 'latin1')
  header.set([2, 1, 1], 4)
  header.writeUInt16LE(3, 16)
  header.writeUInt16LE(machine, 18)
  return header
}

/** The platform packages: `npm/<dir>` for each of the root's optionalDependencies. */
function platformPackages() {
  const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const prefix = `${rootPkg.name}-`
  const listed = Object.keys(rootPkg.optionalDependencies ?? {})
  const dirs = readdirSync(join(root, 'npm')).filter((d) => existsSync(join(root, 'npm', d, 'package.json')))
  const problems = listed.filter((name) => !dirs.includes(name.slice(prefix.length))).map((name) => `${name}: no npm/${name.slice(prefix.length)}/`)
  if (listed.length === 0) problems.push('the root package lists no platform packages in optionalDependencies')
  return { dirs: listed.map((name) => name.slice(prefix.length)).filter((d) => dirs.includes(d)), problems }
}

/** A copy of npm/`dir` with stand-ins for the files the build makes (addon, agents). */
function withStandins(dir, scratch) {
  const copy = join(scratch, dir)
  const built = (name) => name.endsWith('.node') || name in AGENTS
  cpSync(join(root, 'npm', dir), copy, { recursive: true, filter: (src) => !built(src.split('/').pop()) })
  const pkg = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8'))
  for (const file of pkg.files ?? []) {
    if (file.endsWith('.node')) writeFileSync(join(copy, file), 'a stand-in addon\n')
  }
  for (const [file, { machine }] of Object.entries(AGENTS)) writeFileSync(join(copy, file), elfHeader(machine))
  return copy
}

/** What is wrong with the package in `path`: files its tarball would lack, agents of the wrong machine. */
function check(path) {
  const pkg = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8'))
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: path, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const packed = new Map(JSON.parse(out)[0].files.map((f) => [f.path, f]))
  const problems = []
  for (const file of new Set([...(pkg.files ?? []), ...Object.keys(AGENTS)])) {
    if (!packed.has(file)) problems.push(`${pkg.name}: its tarball would lack ${file}`)
  }
  for (const [file, { machine, name }] of Object.entries(AGENTS)) {
    if (!packed.has(file)) continue
    const found = elfMachine(readFileSync(join(path, file)))
    const what = found === null ? 'not a 64-bit ELF executable' : `an executable for ${MACHINES[found] ?? `ELF machine ${found}`}`
    if (found !== machine) problems.push(`${pkg.name}: ${file} is ${what}, not ${name}`)
  }
  console.log(`[pack test] ${pkg.name}: ${[...packed.keys()].sort().join(', ')}`)
  return problems
}

const standins = process.argv.includes('--standins')
const scratch = standins ? mkdtempSync(join(tmpdir(), 'ci-pack-test-')) : null
try {
  const { dirs, problems } = platformPackages()
  for (const dir of dirs) problems.push(...check(standins ? withStandins(dir, scratch) : join(root, 'npm', dir)))
  if (problems.length) {
    for (const p of problems) console.error(`[pack test] ${p}`)
    process.exitCode = 1
  } else {
    console.log(`[pack test] ${dirs.length} platform packages would each hold both Linux agents${standins ? ' (stand-ins)' : ''}`)
  }
} finally {
  if (scratch) rmSync(scratch, { recursive: true, force: true })
}
