// session_checkpoint, session_restore, session_fork: undo and side-by-side attempts,
// wrapping Workspaces.checkpoint/restore/fork. A checkpoint holds the session's clone
// (commits, staged, unstaged and untracked files) and its container's own changes
// (installed packages, caches); a restore ends the session's commands first. On a cluster
// (`cluster` in the server's settings) a checkpoint holds the repository only, and the
// descriptions say so.
'use strict'

const { z } = require('zod')
const { ok } = require('./results.js')
const { INSIDE, strict, session } = require('./tool-args.js')

const checkpointFields = z.object({
  id: z.string(),
  label: z.string().nullable(),
  createdAt: z.string().describe('ISO 8601'),
  commit: z.string().describe("The clone's HEAD then"),
  branch: z.string().nullable(),
})
/** What a checkpoint holds besides the repository, as the server's sessions allow. */
const CONTAINER_TOO = 'and what was installed or changed in its container'
const REPOSITORY_ONLY = '(only that: these sessions run on a cluster, where the container itself cannot be kept; a restore or fork starts it afresh from its image)'
const describe = (c) => ({ id: c.id, label: c.label ?? null, createdAt: new Date(c.createdAt).toISOString(), commit: c.commit, branch: c.branch ?? null })

const sessionCheckpoint = {
  name: 'session_checkpoint',
  title: 'Checkpoint a session',
  annotations: () => ({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }),
  description: ({ cluster }) =>
    `Saves the session as it is now, to go back to with session_restore or to start another attempt from with session_fork: its repository (commits, staged, unstaged and untracked files) ${cluster ? REPOSITORY_ONLY : CONTAINER_TOO}. The oldest of more than 20 is dropped. Returns the new checkpoint and all the session's checkpoints. ${INSIDE}`,
  schema: strict({
    session,
    label: z.string().min(1).max(200).optional().describe('What this state is, e.g. "tests pass"'),
  }),
  output: z.object({ session: z.string(), checkpoint: checkpointFields, checkpoints: z.array(checkpointFields) }),
  async run(args, { sessions, workspaces }) {
    const s = await sessions.get(args.session)
    const made = await workspaces.checkpoint(s.id, { label: args.label })
    const all = await workspaces.checkpoints(s.id)
    return ok({ session: s.id, checkpoint: describe(made), checkpoints: all.map(describe) })
  },
}

const sessionRestore = {
  name: 'session_restore',
  title: 'Restore a session to a checkpoint',
  annotations: () => ({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }),
  description: ({ cluster }) =>
    `Puts the session back to one of its checkpoints (session_checkpoint lists them): its running commands are stopped, ${cluster ? 'its repository becomes exactly what it was then and its container starts afresh from its image' : 'its repository and its container become exactly what they were then'}; what was done since is lost unless a later checkpoint holds it. ${INSIDE}`,
  schema: strict({ session, checkpoint: z.string().regex(/^[0-9a-f]{12}$/).describe("The checkpoint's id") }),
  output: z.object({ session: z.string(), checkpoint: z.string() }),
  async run(args, { sessions }) {
    const s = await sessions.restore(args.session, args.checkpoint)
    return ok({ session: s.id, checkpoint: args.checkpoint })
  },
}

const sessionFork = {
  name: 'session_fork',
  title: 'Fork a session',
  annotations: () => ({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }),
  description: `Opens a new session from one of this session's checkpoints, or from it as it is now: its own clone and container, sharing nothing writable with the first, so another approach can be tried side by side (keep the better one with session_export). Returns the new session's id. ${INSIDE}`,
  schema: strict({
    session,
    title: z.string().min(1).max(200).describe('What the new attempt is for (also names its id)'),
    checkpoint: z.string().regex(/^[0-9a-f]{12}$/).optional().describe('Start from this checkpoint (default: the session now)'),
  }),
  output: z.object({ from: z.string(), session: z.string(), title: z.string(), branch: z.string() }),
  async run(args, { sessions }) {
    const s = await sessions.fork(args.session, { title: args.title, checkpoint: args.checkpoint })
    return ok({ from: args.session ?? '', session: s.id, title: s.title, branch: s.info.branchName })
  },
}

module.exports = { checkpointTools: [sessionCheckpoint, sessionRestore, sessionFork] }
