// session_export: the session's work brought home as one branch, under the server's export
// prefix, of the project (of the library's repository of its snapshot, for a folder that
// is not a git repository) and nothing else of it, wrapping Workspaces.export; which
// branch and whether it may be moved are the ExportPolicy's to decide, before anything is
// written.
'use strict'

const { z } = require('zod')
const { ok } = require('./results.js')
const { INSIDE, strict, session } = require('./tool-args.js')

/** How the user gets the branch, for the model to pass on. */
function howToGet(s, e) {
  // The library's own repository goes to the trash with the session.
  const until = `it is there while the session lasts, then in the trash of the server's base directory`
  if (s.info.snapshotOf) {
    return `the branch is in ${e.projectDir}, the library's repository of its snapshot of ${s.info.snapshotOf} (that folder is not a git repository and is never written); review: git -C ${e.projectDir} log -p ${e.branch}; fetch it into a repository: git fetch ${e.projectDir} ${e.branch} (${until})`
  }
  if (s.info.repositoryUrl) {
    return `the branch is in ${e.projectDir}, the library's clone of ${s.info.repositoryUrl}; review: git -C ${e.projectDir} log -p ${e.branch}; fetch it: git fetch ${e.projectDir} ${e.branch} (${until})`
  }
  return `the branch is in the project ${e.projectDir}${e.snapshot ? ' (its last commit a snapshot of the uncommitted files)' : ''}; review: git log -p ${e.branch}, merge: git merge ${e.branch}`
}

const sessionExport = {
  name: 'session_export',
  title: "Export the session's work as a branch",
  // Destructive only where an existing branch can be moved (force allowed or asked for).
  annotations: ({ forceUsable }) => ({ readOnlyHint: false, destructiveHint: forceUsable, idempotentHint: !forceUsable, openWorldHint: false }),
  description: ({ exportPrefix }) =>
    `Brings the session's work home as a branch under ${exportPrefix} (default ${exportPrefix}<id>) of the user's project (or, for a project folder that is not a git repository, of the library's repository of its snapshot): its commits and, unless uncommitted is false, a snapshot commit of its uncommitted files on top. Only that branch is written: the project's checkout, index and other branches do not change; the user reviews and merges it. A branch outside ${exportPrefix} is refused; force (moving an existing branch) only when the person who started the server allowed it or the user agrees when asked. ${INSIDE}`,
  schema: strict({
    session,
    branch: z.string().min(1).max(255).optional().describe("The branch to write, under the server's export prefix (default: the prefix, session/ unless the server says otherwise, then the session id)"),
    uncommitted: z.boolean().optional().describe('Include uncommitted and untracked files as a snapshot commit (default true)'),
    message: z.string().min(1).max(10000).optional().describe("The snapshot commit's message"),
    force: z.boolean().optional().describe('Move the branch if it exists (default false: EEXIST); only if the server allows it or the user agrees'),
  }),
  output: z.object({
    session: z.string(),
    branch: z.string(),
    reference: z.string(),
    commit: z.string().describe('The branch tip: the snapshot commit when one was made, else HEAD'),
    head: z.string(),
    snapshot: z.string().optional().describe('The snapshot commit of uncommitted work'),
    previous: z.string().optional().describe('Where the branch was before a forced move'),
    objectsCopied: z.number().int(),
    projectDir: z.string().describe('The repository written'),
    snapshotOf: z.string().nullable(),
    howToGet: z.string(),
  }),
  async run(args, { sessions, workspaces, exportPolicy }) {
    // Refused before anything is made or written.
    if (args.branch !== undefined) exportPolicy.checkBranch(args.branch)
    if (args.force) exportPolicy.checkForce()
    const s = await sessions.get(args.session)
    const branch = args.branch ?? exportPolicy.defaultBranch(s.id)
    if (args.force) await exportPolicy.permitForce({ branch, repository: s.info.projectDir, sessionId: s.id, title: s.title })
    const e = await workspaces.export(s.id, { branch, uncommitted: args.uncommitted ?? true, message: args.message, force: Boolean(args.force) })
    return ok({ session: s.id, ...e, snapshotOf: s.info.snapshotOf ?? null, howToGet: howToGet(s, e) })
  },
}

module.exports = { sessionExport }
