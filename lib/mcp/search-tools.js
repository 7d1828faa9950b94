// find_files and search_text over the session's files. The file list comes from `find`
// run inside the container as argv (no shell, no path spliced into a command); contents
// are read through the session's FileIO and matched here with a JavaScript RegExp, under
// a time limit per file, so a pattern that backtracks without end fails alone. Nothing
// reads the project's files on the host.
'use strict'

const vm = require('node:vm')
const { posix } = require('node:path')
const { z } = require('zod')
const { ToolError, invalid, ok } = require('./results.js')
const { resolveIn, shown } = require('./paths.js')
const { globToRegExp } = require('./glob.js')
const { mapLimit } = require('./map-limit.js')
const { INSIDE, strict, reading, session } = require('./tool-args.js')

/** Paths `find` may list before the listing counts as cut. */
const MAX_LISTED = 100_000
/** Files search_text reads at most, the most bytes in all, and the largest it reads. */
const MAX_FILES_SEARCHED = 5000
const MAX_BYTES_SEARCHED = 64 * 1024 * 1024
const MAX_FILE_SEARCHED = 4 * 1024 * 1024
/** A matching line is shown up to this many characters. */
const MAX_LINE_SHOWN = 500
/** How long the pattern may run over one file. */
const REGEX_MS_PER_FILE = 1000

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
  description: `Finds files of the session by glob ("**/*.ts", "src/*.json", "*.md" at any depth), matched against paths relative to the folder searched; .git folders are skipped; up to maxResults paths (default 1000). ${INSIDE}`,
  schema: strict({
    session,
    pattern: z.string().min(1).describe('A glob: * and ? within a path segment, ** across segments, [abc], {a,b}'),
    path: folder,
    maxResults: z.number().int().min(1).max(10000).optional().describe('At most this many paths (default 1000)'),
  }),
  output: z.object({ files: z.array(z.string()), total: z.number().int(), truncated: z.boolean() }),
  async run(args, { sessions, runtime }) {
    const s = await sessions.get(args.session)
    const base = resolveIn(s.root, args.path)
    const matcher = globToRegExp(args.pattern)
    const { paths, truncated: listCut } = await listFiles(runtime, s, base)
    const matched = paths.filter((p) => matcher.test(posix.relative(base, p)))
    const max = args.maxResults ?? 1000
    const files = matched.slice(0, max).map((p) => shown(s.root, p))
    return ok({ files, total: matched.length, truncated: listCut || matched.length > max })
  },
}

/** A context where one file's lines are matched, stopped by `vm` after its time limit. */
function matcherFor(re) {
  const context = vm.createContext({ re, text: '', max: 0, width: MAX_LINE_SHOWN })
  vm.runInContext(
    `function scan() {
      const out = []
      let line = 1
      for (let start = 0; start <= text.length && out.length < max; line++) {
        let end = text.indexOf('\\n', start)
        if (end === -1) end = text.length
        const one = text.slice(start, end)
        if (re.test(one)) out.push([line, one.length > width ? one.slice(0, width) + '…' : one])
        start = end + 1
      }
      return out
    }`,
    context,
  )
  return (text, max) => {
    context.text = text
    context.max = max
    try {
      return vm.runInContext('scan()', context, { timeout: REGEX_MS_PER_FILE })
    } finally {
      context.text = ''
    }
  }
}

const searchText = {
  name: 'search_text',
  title: 'Search text in the session',
  annotations: reading,
  description: `Searches the session's text files for a JavaScript regular expression, line by line, optionally only files matching a glob; .git folders, binary files and files over 4 MiB are skipped; at most 5000 files, 64 MiB and maxMatches matches (default 100). ${INSIDE}`,
  schema: strict({
    session,
    pattern: z.string().min(1).max(1000).describe('A JavaScript regular expression, e.g. "function\\\\s+\\\\w+" (no slashes, no flags)'),
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
  }),
  async run(args, { sessions, runtime }) {
    let re
    try {
      re = new RegExp(args.pattern, args.ignoreCase ? 'i' : '')
    } catch (err) {
      throw invalid(`pattern is not a JavaScript regular expression: ${err.message}`)
    }
    const s = await sessions.get(args.session)
    const base = resolveIn(s.root, args.path)
    const only = args.glob === undefined ? undefined : globToRegExp(args.glob)
    const listed = await listFiles(runtime, s, base)
    const candidates = listed.paths.filter((p) => !only || only.test(posix.relative(base, p)))
    const max = args.maxMatches ?? 100
    const scan = matcherFor(re)
    const matches = []
    let searched = 0
    let skipped = 0
    let bytes = 0
    let cut = listed.truncated
    for (let i = 0; i < candidates.length && matches.length < max; i += 16) {
      if (searched >= MAX_FILES_SEARCHED || bytes >= MAX_BYTES_SEARCHED) {
        cut = true
        break
      }
      const batch = candidates.slice(i, i + 16)
      const contents = await mapLimit(batch, 8, async (p) => {
        const stat = await s.fileIO.stat(p)
        if (!stat || stat.size > MAX_FILE_SEARCHED) return undefined
        return s.fileIO.readBinaryFile(p).catch(() => undefined)
      })
      for (let j = 0; j < batch.length && matches.length < max; j++) {
        const data = contents[j]
        if (!data || data.subarray(0, 8192).includes(0)) {
          skipped++
          continue
        }
        searched++
        bytes += data.length
        const rel = shown(s.root, batch[j])
        let found
        try {
          found = scan(data.toString('utf8'), max - matches.length)
        } catch (err) {
          if (err?.code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw err
          throw new ToolError('TIMEOUT', `the pattern ran over ${REGEX_MS_PER_FILE} ms on ${rel}: simplify it (nested quantifiers such as (a+)+ backtrack without end)`)
        }
        for (const [line, text] of found) matches.push({ path: rel, line, text })
      }
    }
    return ok({ matches, filesSearched: searched, filesSkipped: skipped, truncated: cut || matches.length >= max })
  },
}

module.exports = { searchTools: [findFiles, searchText] }
