// The CLI's undo commands: checkpoint saves a session (its clone and its container's own
// changes), checkpoints lists them, restore puts the session back to one, fork starts a
// new session from one (or from the session as it is now).
'use strict'

const { UsageError, age, session, table } = require('./cli-common.js')

const commands = {
  async checkpoint(args, workspaces) {
    const sessionId = session(args, 'checkpoint')
    const made = await workspaces.checkpoint(sessionId, { label: args.label })
    if (args.json) console.log(JSON.stringify(made, null, 2))
    else console.log(`${sessionId}: checkpoint ${made.id}${made.label ? ` (${made.label})` : ''} at ${made.commit.slice(0, 12)}`)
    return 0
  },

  async checkpoints(args, workspaces) {
    const all = await workspaces.checkpoints(session(args, 'checkpoints'))
    if (args.json) console.log(JSON.stringify(all, null, 2))
    else if (all.length === 0) console.log('no checkpoints')
    else
      console.log(
        table(
          all.map((c) => ({ id: c.id, age: age(c.createdAt), commit: c.commit.slice(0, 12), branch: c.branch ?? '(detached)', label: c.label ?? '' })),
          ['id', 'age', 'commit', 'branch', 'label'],
        ),
      )
    return 0
  },

  async restore(args, workspaces) {
    const [sessionId, checkpoint] = args._
    if (!sessionId || !checkpoint) throw new UsageError('restore needs a session and a checkpoint')
    const info = await workspaces.restore(sessionId, checkpoint)
    if (args.json) console.log(JSON.stringify(info, null, 2))
    else console.log(`${sessionId}: back at checkpoint ${checkpoint} (its commands ended, clone and container as they were)`)
    return 0
  },

  async fork(args, workspaces) {
    const sessionId = session(args, 'fork')
    if (!args.session) throw new UsageError('fork needs --session NEW')
    const info = await workspaces.fork(sessionId, { sessionId: args.session, checkpoint: args.checkpoint })
    if (args.json) console.log(JSON.stringify(info, null, 2))
    else console.log(`${info.sessionId}: forked from ${sessionId}${args.checkpoint ? ` at checkpoint ${args.checkpoint}` : ''} (branch ${info.branchName})`)
    return 0
  },
}

module.exports = { commands }
