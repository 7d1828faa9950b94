// session_open, session_list, session_close, session_changes: sessions as a whole,
// wrapping Workspaces.create/destroy/changes, and taking up sessions an earlier server
// kept. What a session did comes from its clone, read on the host as hostile input. Each
// tool's annotations say what it does under the server's settings (keep, autoSession).
'use strict'

const { z } = require('zod')
const { invalid, ok } = require('./results.js')
const { INSIDE, strict, reading, session } = require('./tool-args.js')

const MAX_LISTED = 1000
const MAX_COMMITS = 200
const DEFAULT_PATCH_BYTES = 64 * 1024
const MAX_PATCH_BYTES = 1024 * 1024

const sessionFields = {
  session: z.string(),
  title: z.string(),
  branch: z.string(),
  baseCommit: z.string().nullable(),
  image: z.string(),
  workspaceFolder: z.string(),
  lifetime: z.string().describe("'process': removed when the server ends; 'session': kept (stopped) for a later server"),
}

const describe = (id, title, info) => ({ session: id, title, branch: info.branchName, baseCommit: info.baseCommit ?? null, image: info.image, workspaceFolder: info.containerMountPath, lifetime: info.lifetime ?? 'session' })

const sessionOpen = {
  name: 'session_open',
  title: 'Open an isolated session',
  annotations: () => ({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }),
  description: `Opens a new isolated session: a git clone of the project (at ref, default its HEAD) in a container of its own; or, given session, takes up a session an earlier server kept (session_list shows them). Returns its id, for the other tools' session argument (which may be left out while exactly one session is open). ${INSIDE}`,
  schema: strict({
    title: z.string().min(1).max(200).optional().describe('What the session is for, e.g. "fix the login bug" (also names its id); needed for a new session'),
    ref: z.string().min(1).max(255).optional().describe("The project's branch, tag or commit a new session starts at (default: its HEAD)"),
    session: z.string().min(1).max(128).optional().describe('A kept session to take up instead of opening a new one'),
  }),
  output: z.object({ ...sessionFields, attached: z.boolean().describe('A kept session taken up, not a new one'), warnings: z.array(z.string()) }),
  async run(args, { sessions }) {
    if (args.session !== undefined) {
      if (args.title !== undefined || args.ref !== undefined) throw invalid('session_open: session takes up a kept session as it is; title and ref are for a new one')
      const s = await sessions.attach(args.session)
      return ok({ ...describe(s.id, s.title, s.info), attached: true, warnings: [] })
    }
    if (args.title === undefined) throw invalid('session_open: title is needed for a new session (or session, to take up a kept one)')
    const s = await sessions.openSession({ title: args.title, ref: args.ref })
    return ok({ ...describe(s.id, s.title, s.info), attached: false, warnings: s.info.warnings ?? [] })
  },
}

const sessionList = {
  name: 'session_list',
  title: 'List the sessions',
  annotations: () => ({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }),
  description: `Lists the sessions open in this server, with their ids, titles, branches, state and running commands, and the sessions an earlier server kept for this project (open: false), which session_open takes up. ${INSIDE}`,
  schema: strict({}),
  output: z.object({
    sessions: z.array(z.object({ ...sessionFields, state: z.string(), open: z.boolean(), runningCommands: z.array(z.string()) })),
  }),
  async run(_args, { sessions, workspaces, commands }) {
    const open = await Promise.all(
      sessions.list().map(async (s) => ({ ...describe(s.id, s.title, s.info), state: (await workspaces.get(s.id))?.state ?? 'missing', open: true, runningCommands: commands.running(s.id).map((c) => c.id) })),
    )
    const kept = (await sessions.keptElsewhere()).map(({ record, info }) => ({ ...describe(record.session, record.title, info), state: info.state, open: false, runningCommands: [] }))
    return ok({ sessions: [...open, ...kept] })
  },
}

const sessionClose = {
  name: 'session_close',
  title: 'Close a session',
  // Without --keep its container is removed and its clone goes to the trash.
  annotations: ({ keep }) => ({ readOnlyHint: false, destructiveHint: !keep, idempotentHint: true, openWorldHint: false }),
  description: ({ keep }) =>
    `Closes a session and stops its commands: ${keep ? 'its container is stopped and the session kept, for a later server (session_list, session_open) or container-isolation ls/export' : 'its container is removed and its clone moved to the trash'}. Export its work first if the user wants it. ${INSIDE}`,
  schema: strict({ session }),
  output: z.object({ session: z.string(), kept: z.boolean() }),
  async run(args, { sessions, keep }) {
    const s = await sessions.close(args.session)
    return ok({ session: s.id, kept: keep })
  },
}

const sessionChanges = {
  name: 'session_changes',
  title: "Show a session's changes",
  annotations: reading,
  description: `What the session changed since it started: its commits, the files changed (with line counts), its uncommitted and untracked files and, with patch, the unified diff of its commits and, separately, of its uncommitted work (what session_export would add as a snapshot commit), together cut at maxPatchBytes. Read from the session's clone on the host as untrusted input. ${INSIDE}`,
  schema: strict({
    session,
    patch: z.boolean().optional().describe('Include the unified diffs (default false)'),
    maxPatchBytes: z.number().int().min(1).max(MAX_PATCH_BYTES).optional().describe('Cut the diffs at this many bytes in all (default 65536)'),
  }),
  output: z.object({
    session: z.string(),
    base: z.string(),
    baseKind: z.enum(['recorded', 'merge-base', 'unrelated']),
    head: z.string(),
    commits: z.array(z.object({ id: z.string(), summary: z.string(), authorName: z.string(), authorEmail: z.string(), timeMs: z.number() })),
    files: z.array(
      z.object({ path: z.string(), oldPath: z.string().optional(), additions: z.number().int(), deletions: z.number().int(), binary: z.boolean(), status: z.string() }),
    ),
    uncommitted: z.array(z.object({ path: z.string(), oldPath: z.string().optional(), status: z.string() })),
    truncated: z.boolean(),
    totals: z.object({ commits: z.number().int(), files: z.number().int(), uncommitted: z.number().int() }),
    patch: z.string().optional().describe('The unified diff base..HEAD (committed work)'),
    patchTruncated: z.boolean().optional(),
    uncommittedPatch: z.string().optional().describe('The unified diff HEAD..work tree: uncommitted and untracked files, not in any commit yet'),
    uncommittedPatchTruncated: z.boolean().optional(),
  }),
  async run(args, { sessions, workspaces }) {
    const s = await sessions.get(args.session)
    const c = await workspaces.changes(s.id, { patch: Boolean(args.patch), maxPatchBytes: args.maxPatchBytes ?? DEFAULT_PATCH_BYTES })
    const structured = {
      session: s.id,
      base: c.base,
      baseKind: c.baseKind,
      head: c.head,
      commits: c.commits.slice(0, MAX_COMMITS),
      files: c.files.slice(0, MAX_LISTED),
      uncommitted: c.uncommitted.slice(0, MAX_LISTED),
      truncated: c.commits.length > MAX_COMMITS || c.files.length > MAX_LISTED || c.uncommitted.length > MAX_LISTED,
      totals: { commits: c.commits.length, files: c.files.length, uncommitted: c.uncommitted.length },
    }
    if (args.patch) {
      Object.assign(structured, {
        patch: c.patch ?? '',
        patchTruncated: Boolean(c.patchTruncated),
        uncommittedPatch: c.uncommittedPatch ?? '',
        uncommittedPatchTruncated: Boolean(c.uncommittedPatchTruncated),
      })
    }
    return ok(structured)
  },
}

module.exports = { sessionTools: [sessionOpen, sessionList, sessionClose, sessionChanges] }
