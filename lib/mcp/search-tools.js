// find_files and search_text over the session's files. The file list comes from `find`
// run inside the container as argv (no shell, no path spliced into a command); contents
// are read through the session's FileIO. The client's glob and regular expression are
// compiled and matched by the addon (PathMatcher, TextMatcher): finite automata, in time
// linear in what is searched, off the event loop, within one deadline for the whole call;
// so a pattern costs the server bounded time, and the server answers other calls (of every
// session) meanwhile. Nothing reads the project's files on the host.
'use strict'

const { posix } = require('node:path')
const { z } = require('zod')
const { ToolError, ok } = require('./results.js')
const { resolveIn, shown } = require('./paths.js')
const { PathMatcher, TextMatcher } = require('../index.js')
const { mapLimit } = require('./map-limit.js')
const { INSIDE, strict, reading, session } = require('./tool-args.js')

/** Paths `find` may list before the listing counts as cut. */
const MAX_LISTED = 100_000
/** Files search_text reads at most, the most bytes in all, and the largest it reads. */
const MAX_FILES_SEARCHED = 5000
const MAX_BYTES_SEARCHED = 64 * 1024 * 1024
const MAX_FILE_SEARCHED = 4 * 1024 * 1024
/** How long one call may match and read files, from its start; then it answers with what it found, truncated, and a note. */
// The deadline of one find_files or search_text call: CONTAINER_ISOLATION_MCP_SEARCH_MS in
// the server's environment (a host that wants shorter or longer calls), else 20 s.
const CALL_MS = Number(process.env.CONTAINER_ISOLATION_MCP_SEARCH_MS) > 0 ? Number(process.env.CONTAINER_ISOLATION_MCP_SEARCH_MS) : 20_000

/** The note of a call that stopped at its deadline. */
const stoppedNote = (what) => `stopped at the ${CALL_MS / 1000} s deadline of a call after ${what}: narrow the pattern, path or glob`

const folder = z.string().min(1).optional().describe("A folder relative to the session's workspace folder (default: the workspace folder)")

/**
 * Files (and links) under `absolute` in the session's container, `.git` folders left out,
 * sorted, as absolute container paths.
 */
async function listFiles(runtime, s, absolute) {
  const command = ['find', absolute, '-name', '.git', '-prune', '-o', '(', '-type', 'f', '-o', '-type', 'l', ')', '-print0']
  const result = await runtime.exec(s.info.containerId, { command, timeout: 30_000 })
  const paths = result.stdout.split('\0').filter(Boolean)
  if (paths.length === 0 && result.exitCode !== 0) {
    const why = result.stderr.trim().split('\n')[0] || `exit code ${result.exitCode}`
    const code = result.exitCode === 127 || /not found|no such file/i.test(why) ? 'ENOENT' : 'ENGINE_ERROR'
    throw new ToolError(code, `listing ${shown(s.root, absolute)} with find in the session's container failed: ${why}`)
  }
  const truncated = paths.length > MAX_LISTED
  return { paths: paths.slice(0, MAX_LISTED).sort(), truncated }
}

const findFiles = {
  name: 'find_files',
  title: 'Find files in the session',
  annotations: reading,
  description: `Finds files of the session by glob ("**/*.ts", "src/*.json", "*.md" at any depth), matched against paths relative to the folder searched; .git folders are skipped; up to maxResults paths (default 1000), within ${CALL_MS / 1000} s (then truncated, with a note). ${INSIDE}`,
  schema: strict({
    session,
    pattern: z.string().min(1).describe('A glob (at most 1000 characters): * and ? within a path segment, ** as a whole segment across segments, [abc], [!abc], {a,b}, \\ escapes'),
    path: folder,
    maxResults: z.number().int().min(1).max(10000).optional().describe('At most this many paths (default 1000)'),
  }),
  output: z.object({
    files: z.array(z.string()),
    total: z.number().int(),
    truncated: z.boolean(),
    note: z.string().optional().describe('Why the listing stopped early, when it did'),
  }),
  async run(args, { sessions, runtime }) {
    const deadline = Date.now() + CALL_MS
    const s = await sessions.get(args.session)
    const base = resolveIn(s.root, args.path)
    const matcher = await PathMatcher.compile(args.pattern)
    const { paths, truncated: listCut } = await listFiles(runtime, s, base)
    const { indices, complete } = await matcher.matchPaths(
      paths.map((p) => posix.relative(base, p)),
      deadline - Date.now(),
    )
    const max = args.maxResults ?? 1000
    const files = indices.slice(0, max).map((i) => shown(s.root, paths[i]))
    const result = { files, total: indices.length, truncated: listCut || !complete || indices.length > max }
    if (!complete) result.note = stoppedNote(`${paths.length} paths listed`)
    return ok(result)
  },
}

const searchText = {
  name: 'search_text',
  title: 'Search text in the session',
  annotations: reading,
  description: `Searches the session's text files for a regular expression in Rust regex syntax, line by line, in time linear in the text (no look-around, no backreferences; \\w, \\d, \\s are Unicode, \\b an ASCII word boundary), optionally only files matching a glob; .git folders, binary files and files over 4 MiB are skipped; at most 5000 files, 64 MiB, maxMatches matches (default 100) and ${CALL_MS / 1000} s (then truncated, with a note). ${INSIDE}`,
  schema: strict({
    session,
    pattern: z.string().min(1).max(1000).describe('A regular expression in Rust regex syntax, e.g. "function\\\\s+\\\\w+" (no slashes, no flags; inline (?i) works; look-around and backreferences are refused)'),
    path: folder,
    glob: z.string().min(1).optional().describe('Only files whose path (relative to the folder searched) matches this glob, e.g. "*.ts"'),
    ignoreCase: z.boolean().optional().describe('Match without regard to case (default false)'),
    maxMatches: z.number().int().min(1).max(1000).optional().describe('At most this many matching lines (default 100)'),
  }),
  output: z.object({
    matches: z.array(z.object({ path: z.string(), line: z.number().int(), text: z.string() })),
    filesSearched: z.number().int(),
    filesSkipped: z.number().int().describe('Binary, unreadable or over 4 MiB'),
    truncated: z.boolean().describe('Stopped at a bound: narrow the pattern, path or glob'),
    note: z.string().optional().describe('Why the search stopped early, when it stopped at its deadline'),
  }),
  async run(args, { sessions, runtime }) {
    const deadline = Date.now() + CALL_MS
    const matcher = await TextMatcher.compile(args.pattern, { ignoreCase: args.ignoreCase ?? false })
    const s = await sessions.get(args.session)
    const base = resolveIn(s.root, args.path)
    const only = args.glob === undefined ? undefined : await PathMatcher.compile(args.glob)
    const listed = await listFiles(runtime, s, base)
    let candidates = listed.paths
    let complete = true
    if (only) {
      const found = await only.matchPaths(
        candidates.map((p) => posix.relative(base, p)),
        deadline - Date.now(),
      )
      candidates = found.indices.map((i) => listed.paths[i])
      complete = found.complete
    }
    const max = args.maxMatches ?? 100
    const matches = []
    let searched = 0
    let skipped = 0
    let bytes = 0
    let cut = listed.truncated
    for (let i = 0; complete && i < candidates.length && matches.length < max; i += 16) {
      if (searched >= MAX_FILES_SEARCHED || bytes >= MAX_BYTES_SEARCHED) {
        cut = true
        break
      }
      if (Date.now() >= deadline) {
        complete = false
        break
      }
      const batch = candidates.slice(i, i + 16)
      const contents = await mapLimit(batch, 8, async (p) => {
        const stat = await s.fileIO.stat(p)
        if (!stat || stat.size > MAX_FILE_SEARCHED) return undefined
        return s.fileIO.readBinaryFile(p).catch(() => undefined)
      })
      for (let j = 0; complete && j < batch.length && matches.length < max; j++) {
        const data = contents[j]
        if (!data || data.subarray(0, 8192).includes(0)) {
          skipped++
          continue
        }
        searched++
        bytes += data.length
        const found = await matcher.searchLines(data, max - matches.length, deadline - Date.now())
        const rel = shown(s.root, batch[j])
        for (const { line, text } of found.matches) matches.push({ path: rel, line, text })
        complete = found.complete
      }
    }
    const result = { matches, filesSearched: searched, filesSkipped: skipped, truncated: cut || !complete || matches.length >= max }
    if (!complete) result.note = stoppedNote(`${searched} of ${candidates.length} files`)
    return ok(result)
  },
}

module.exports = { searchTools: [findFiles, searchText] }
