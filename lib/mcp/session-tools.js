// session_open, session_list, session_close, session_changes: sessions as a whole,
// wrapping Workspaces.create/destroy/changes. What a session did comes from its clone,
// read on the host as hostile input. Each tool's annotations say what it does under the
// server's settings (keep, egress, forceUsable).
'use strict'

const { z } = require('zod')
const { ok, clip } = require('./results.js')
const { INSIDE, session } = require('./tool-args.js')

const MAX_LISTED = 1000
const MAX_COMMITS = 200
const DEFAULT_PATCH_BYTES = 64 * 1024
const MAX_PATCH_BYTES = 1024 * 1024

const describe = (s) => ({ session: s.id, title: s.title, branch: s.info.branchName, baseCommit: s.info.baseCommit ?? null, image: s.info.image, workspaceFolder: s.root, lifetime: s.info.lifetime })

const sessionOpen = {
  name: 'session_open',
  title: 'Open an isolated session',
  annotations: () => ({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }),
  description: `Opens a new isolated session: a git clone of the project (at ref, default its HEAD) in a container of its own. Returns its id, for the other tools' session argument; a tool called without one uses this connection's default session. ${INSIDE}`,
  schema: z.object({
    title: z.string().min(1).max(200).describe('What the session is for, e.g. "fix the login bug" (also names its id)'),
    ref: z.string().min(1).max(255).optional().describe("The project's branch, tag or commit the session starts at (default: its HEAD)"),
  }),
  async run(args, { sessions }) {
    const s = await sessions.openSession({ title: args.title, ref: args.ref })
    const warnings = s.info.warnings ?? []
    const text = `opened session ${s.id} on branch ${s.info.branchName} (${s.info.image}), files at ${s.root}${warnings.length ? `\nwarnings:\n${warnings.map((w) => `- ${w}`).join('\n')}` : ''}`
    return ok(text, { ...describe(s), warnings })
  },
}

const sessionList = {
  name: 'session_list',
  title: 'List the open sessions',
  annotations: () => ({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }),
  description: `Lists the sessions open in this server, with their ids, titles, branches and state. ${INSIDE}`,
  schema: z.object({}),
  async run(_args, { sessions, workspaces }) {
    const listed = await Promise.all(sessions.list().map(async (s) => ({ ...describe(s), state: (await workspaces.get(s.id))?.state ?? 'missing' })))
    const lines = listed.map((s) => `${s.session}\t${s.state}\t${s.branch}\t${s.title}`)
    return ok(listed.length ? lines.join('\n') : 'no session is open yet (session_open opens one; other tools open a default one)', { sessions: listed })
  },
}

const sessionClose = {
  name: 'session_close',
  title: 'Close a session',
  // Without --keep its container is removed and its clone goes to the trash.
  annotations: ({ keep }) => ({ readOnlyHint: false, destructiveHint: !keep, idempotentHint: true, openWorldHint: false }),
  description: `Closes a session: its container is removed and its clone moved to the trash (with --keep: stopped and kept for container-isolation ls/export). Export its work first if the user wants it. ${INSIDE}`,
  schema: z.object({ session }),
  async run(args, { sessions, keep }) {
    const s = await sessions.close(args.session)
    const what = keep ? 'container stopped, clone kept (container-isolation ls shows it)' : 'container removed, clone moved to trash'
    return ok(`closed session ${s.id}: ${what}`, { session: s.id, kept: keep })
  },
}

const sessionChanges = {
  name: 'session_changes',
  title: "Show a session's changes",
  // Not read-only: called without a session it opens the connection's default session.
  annotations: () => ({ readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }),
  description: `What the session changed since it started: its commits, the files changed (with line counts), its uncommitted and untracked files and, with patch, the unified diff (cut at maxPatchBytes). Read from the session's clone on the host as untrusted input. ${INSIDE}`,
  schema: z.object({
    session,
    patch: z.boolean().optional().describe('Include the unified diff of its commits (default false)'),
    maxPatchBytes: z.number().int().min(1).max(MAX_PATCH_BYTES).optional().describe('Cut the diff at this many bytes (default 65536)'),
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
    if (args.patch) Object.assign(structured, { patch: c.patch ?? '', patchTruncated: Boolean(c.patchTruncated) })
    const lines = [
      `${c.commits.length} commit(s), ${c.files.length} file(s) changed, ${c.uncommitted.length} uncommitted since ${c.base.slice(0, 12)}${c.baseKind === 'recorded' ? '' : ` (${c.baseKind})`}`,
      ...structured.commits.map((k) => `commit ${k.id.slice(0, 12)} ${clip(k.summary, 200)}`),
      ...structured.files.map((f) => `${f.status} ${f.oldPath ? `${f.oldPath} -> ` : ''}${f.path} ${f.binary ? '(binary)' : `+${f.additions} -${f.deletions}`}`),
      ...structured.uncommitted.map((u) => `${u.status} ${u.oldPath ? `${u.oldPath} -> ` : ''}${u.path}`),
    ]
    if (structured.truncated) lines.push('(lists cut; the structured result has the totals)')
    if (args.patch) lines.push('', c.patch ?? '', ...(c.patchTruncated ? ['(diff cut at maxPatchBytes)'] : []))
    return ok(lines.join('\n'), structured)
  },
}

module.exports = { sessionTools: [sessionOpen, sessionList, sessionClose, sessionChanges] }
