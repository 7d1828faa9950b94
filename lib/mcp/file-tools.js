// read_file, write_file, edit_file, list_directory: the session's files through its FileIO
// (inside its container, as the session's user), never the project's on the host.
// read_file and list_directory only read, unless the server opens a session for a call
// without one (--auto-session); write_file and edit_file replace what a file held.
'use strict'

const { posix } = require('node:path')
const { z } = require('zod')
const { ToolError, invalid, ok } = require('./results.js')
const { resolveIn, shown } = require('./paths.js')
const { mapLimit } = require('./map-limit.js')
const { INSIDE, strict, reading, session, pathArg } = require('./tool-args.js')

/** The most a file may hold for read_file/edit_file to load it, and write_file to write. */
const MAX_FILE_BYTES = 16 * 1024 * 1024
/** The most text one read_file returns. */
const MAX_READ_TEXT = 256 * 1024
/** The most entries list_directory returns. */
const MAX_ENTRIES = 1000


const megabytes = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`

/** A file of the session loaded whole, within the bound. */
async function load(s, absolute, rel) {
  const stat = await s.fileIO.stat(absolute)
  if (stat && stat.size > MAX_FILE_BYTES) {
    throw new ToolError('LIMIT_EXCEEDED', `${rel} is ${megabytes(stat.size)}, over the ${megabytes(MAX_FILE_BYTES)} this tool loads; use run_command (head, tail, sed -n) for parts of it`)
  }
  return s.fileIO.readBinaryFile(absolute)
}

/** Text with a NUL byte in its first 8 KiB is taken for binary, as git does. */
const isBinary = (bytes) => bytes.subarray(0, 8192).includes(0)

const readFile = {
  name: 'read_file',
  title: 'Read a file of the session',
  annotations: reading,
  description: `Reads a text file of the session, whole or a range of lines (offset, limit), up to 256 KiB per call; a binary file (a NUL in its first 8 KiB) is reported, not shown. ${INSIDE}`,
  schema: strict({
    session,
    path: pathArg,
    offset: z.number().int().min(1).optional().describe('The first line to return, from 1 (default 1)'),
    limit: z.number().int().min(1).max(100000).optional().describe('How many lines to return at most (default 2000)'),
  }),
  output: z.object({
    path: z.string(),
    size: z.number().int(),
    binary: z.boolean(),
    totalLines: z.number().int().optional(),
    startLine: z.number().int().optional(),
    endLine: z.number().int().optional(),
    truncated: z.boolean().optional(),
    content: z.string().optional().describe('The lines startLine to endLine, each but the file\'s last followed by a newline'),
    note: z.string().optional(),
  }),
  async run(args, { sessions }) {
    const s = await sessions.get(args.session)
    const absolute = resolveIn(s.root, args.path)
    const rel = shown(s.root, absolute)
    const bytes = await load(s, absolute, rel)
    if (isBinary(bytes)) return ok({ path: rel, size: bytes.length, binary: true, note: 'a binary file: not shown (run_command with xxd or od shows bytes)' })
    const lines = bytes.toString('utf8').split('\n')
    const totalLines = lines[lines.length - 1] === '' ? lines.length - 1 : lines.length
    const start = (args.offset ?? 1) - 1
    if (start > 0 && start >= totalLines) throw invalid(`offset ${start + 1} is past the end of ${rel} (${totalLines} lines)`)
    const wanted = Math.min(totalLines, start + (args.limit ?? 2000))
    let end = start
    let size = 0
    while (end < wanted && size + Buffer.byteLength(lines[end]) + 1 <= MAX_READ_TEXT) size += Buffer.byteLength(lines[end++]) + 1
    if (end === start && end < wanted) throw new ToolError('LIMIT_EXCEEDED', `line ${start + 1} of ${rel} is over ${MAX_READ_TEXT / 1024} KiB; use run_command (cut, head -c) for it`)
    // Every line but the file's last is followed by a newline.
    const content = lines.slice(start, end).join('\n') + (end > start && end < lines.length ? '\n' : '')
    const truncated = start > 0 || end < totalLines
    const result = { path: rel, size: bytes.length, binary: false, totalLines, startLine: start + 1, endLine: end, truncated, content }
    if (end < totalLines) result.note = `lines ${start + 1}-${end} of ${totalLines}: read on with offset ${end + 1}`
    return ok(result)
  },
}

const writeFile = {
  name: 'write_file',
  title: 'Write a file of the session',
  annotations: () => ({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }),
  description: `Writes a file of the session whole (creating missing parent folders), up to 16 MiB. ${INSIDE} The user gets the work through session_export.`,
  schema: strict({
    session,
    path: pathArg,
    content: z.string().describe('The file\'s new content'),
    encoding: z.enum(['utf8', 'base64']).optional().describe('How content is given: utf8 text (default) or base64 bytes'),
  }),
  output: z.object({ path: z.string(), bytes: z.number().int(), created: z.boolean() }),
  async run(args, { sessions }) {
    const length = args.encoding === 'base64' ? Math.floor((args.content.length * 3) / 4) : Buffer.byteLength(args.content)
    if (length > MAX_FILE_BYTES) throw new ToolError('LIMIT_EXCEEDED', `content is ${megabytes(length)}, over the ${megabytes(MAX_FILE_BYTES)} write_file takes`)
    const s = await sessions.get(args.session)
    const absolute = resolveIn(s.root, args.path)
    if (absolute === s.root) throw invalid('write_file needs a file path, not the workspace folder')
    const rel = shown(s.root, absolute)
    const bytes = Buffer.from(args.content, args.encoding === 'base64' ? 'base64' : 'utf8')
    await s.fileIO.mkdir(posix.dirname(absolute))
    const existed = await s.fileIO.fileExists(absolute)
    await s.fileIO.writeFile(absolute, bytes)
    return ok({ path: rel, bytes: bytes.length, created: !existed })
  },
}

/** Where `needle` occurs in `text`, without overlaps. */
function occurrences(text, needle) {
  const at = []
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) at.push(i)
  return at
}

const lineOf = (text, index) => text.slice(0, index).split('\n').length

const editFile = {
  name: 'edit_file',
  title: 'Edit a file of the session',
  annotations: () => ({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false }),
  description: `Replaces an exact piece of text in a file of the session. oldText must occur exactly once (whitespace and line ends included) unless replaceAll is true; a missing match is EDIT_NO_MATCH, more than one EDIT_AMBIGUOUS, and the file is then left as it was. ${INSIDE}`,
  schema: strict({
    session,
    path: pathArg,
    oldText: z.string().min(1).describe('The exact text to replace'),
    newText: z.string().describe('The text to put in its place'),
    replaceAll: z.boolean().optional().describe('Replace every occurrence (default false: exactly one must exist)'),
  }),
  output: z.object({ path: z.string(), replacements: z.number().int(), line: z.number().int().describe('Where the first replacement starts') }),
  async run(args, { sessions }) {
    if (args.oldText === args.newText) throw invalid('newText is the same as oldText: nothing to change')
    const s = await sessions.get(args.session)
    const absolute = resolveIn(s.root, args.path)
    const rel = shown(s.root, absolute)
    const bytes = await load(s, absolute, rel)
    if (isBinary(bytes)) throw invalid(`${rel} is a binary file; edit_file changes text (write_file replaces a file whole)`)
    const text = bytes.toString('utf8')
    const at = occurrences(text, args.oldText)
    if (at.length === 0) throw new ToolError('EDIT_NO_MATCH', `oldText was not found in ${rel}: it must match the file exactly, whitespace and line ends included (read_file shows it)`)
    if (at.length > 1 && !args.replaceAll) {
      const lines = at.slice(0, 10).map((i) => lineOf(text, i))
      throw new ToolError('EDIT_AMBIGUOUS', `oldText occurs ${at.length} times in ${rel} (lines ${lines.join(', ')}${at.length > 10 ? ', …' : ''}): include more of the surrounding text to make it unique, or set replaceAll`)
    }
    const edited = at.length === 1 ? text.slice(0, at[0]) + args.newText + text.slice(at[0] + args.oldText.length) : text.split(args.oldText).join(args.newText)
    const size = Buffer.byteLength(edited)
    if (size > MAX_FILE_BYTES) throw new ToolError('LIMIT_EXCEEDED', `the edited ${rel} would be ${megabytes(size)}, over the ${megabytes(MAX_FILE_BYTES)} a file may be written`)
    await s.fileIO.writeFile(absolute, Buffer.from(edited))
    const line = lineOf(text, at[0])
    return ok({ path: rel, replacements: at.length, line })
  },
}

const listDirectory = {
  name: 'list_directory',
  title: 'List a folder of the session',
  annotations: reading,
  description: `Lists a folder of the session: names (dotfiles included), each a file with its size or a directory, up to 1000 entries. ${INSIDE}`,
  schema: strict({ session, path: pathArg.optional().describe("A folder relative to the session's workspace folder (default: the workspace folder)") }),
  output: z.object({
    path: z.string(),
    entries: z.array(z.object({ name: z.string(), type: z.enum(['file', 'directory', 'other']), size: z.number().int().optional() })),
    total: z.number().int(),
    truncated: z.boolean(),
  }),
  async run(args, { sessions }) {
    const s = await sessions.get(args.session)
    const absolute = resolveIn(s.root, args.path)
    const rel = shown(s.root, absolute)
    const names = await s.fileIO.readdir(absolute)
    const listed = names.slice(0, MAX_ENTRIES)
    const entries = await mapLimit(listed, 32, async (name) => {
      const child = posix.join(absolute, name)
      const [directory, stat] = await Promise.all([s.fileIO.isDirectory(child), s.fileIO.stat(child)])
      if (directory) return { name, type: 'directory' }
      return stat ? { name, type: 'file', size: stat.size } : { name, type: 'other' }
    })
    return ok({ path: rel, entries, total: names.length, truncated: names.length > listed.length })
  },
}

module.exports = { fileTools: [readFile, writeFile, editFile, listDirectory], MAX_FILE_BYTES }
