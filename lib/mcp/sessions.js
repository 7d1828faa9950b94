// The sessions one MCP server works in: each a `Workspaces` session (a clone of the
// project plus its container) with the FileIO and shells bound to it. Which session a
// call without a session id means is never a guess: the one open session; with none, a
// NO_SESSION error saying to open one (or, with --auto-session, one opened); with several,
// SESSION_AMBIGUOUS listing them. Without --keep sessions are `lifetime: 'process'` and
// go when the server ends; with it they are `'session'`, stopped at the end, and a later
// server lists them and attaches to them (`kept-sessions.js`).
'use strict'

const { randomBytes } = require('node:crypto')
const { CloneManager, readDevcontainerConfig } = require('../index.js')
const { ToolError, invalid } = require('./results.js')
const { withGrants } = require('./ask-user.js')
const { Session } = require('./session.js')

/** A session id from a title: its words, then random hex (`fix-login-3f9a2c`). */
function newSessionId(title) {
  const words = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '')
  return `${words || 'mcp'}-${randomBytes(3).toString('hex')}`
}

const shuttingDown = () => new ToolError('CONTAINER_NOT_RUNNING', 'the server is shutting down')

class Sessions {
  /**
   * @param {{ workspaces: any, projectDir: string, image?: string, egress?: string | object,
   *   trust?: object, keep: boolean, autoSession: boolean, baseDir?: string,
   *   ask: import('./ask-user.js').AskUser, logs: import('./session-logs.js').SessionLogs,
   *   kept: import('./kept-sessions.js').KeptSessions, commands: import('./command.js').Commands }} opts
   */
  constructor(opts) {
    this.opts = opts
    /** @type {Map<string, Session>} */
    this.open = new Map()
    /** Opens under way: a call without a session waits for them before it decides. */
    this.opening = new Set()
    this.autoOpened = undefined
    this.closing = false
  }

  /** The egress a new session gets: a policy's undecided hosts are asked of the user. */
  egressFor() {
    const { egress, ask } = this.opts
    if (egress === undefined || typeof egress === 'string') return egress
    return { ...egress, onRequest: (request) => ask.egress(request, this.open.get(request.sessionId)?.title) }
  }

  /** `promise`, counted among the opens under way while it runs. */
  async track(promise) {
    this.opening.add(promise)
    try {
      return await promise
    } finally {
      this.opening.delete(promise)
    }
  }

  /**
   * Creates a session; a devcontainer.json asking beyond the session is put to the user,
   * and created again with what they grant.
   * @param {{ title: string, ref?: string }} request
   */
  openSession(request) {
    return this.track(this.create(request))
  }

  async create({ title, ref }) {
    if (this.closing) throw shuttingDown()
    const { workspaces, projectDir, image, keep } = this.opts
    if (!image && !(await readDevcontainerConfig(projectDir))) {
      throw invalid(`the project ${projectDir} has no devcontainer.json and the server no image: start it with --image IMG (or set CONTAINER_ISOLATION_IMAGE)`)
    }
    const id = newSessionId(title)
    const lifetime = keep ? 'session' : 'process'
    // On a cluster a session is a git project's (no snapshot of a plain folder).
    const folder = this.opts.kubernetes ? {} : { plainFolder: 'snapshot' }
    // A folder without a commit is snapshotted, never initialised: nothing is written into it.
    const create = (trust) => workspaces.create({ projectDir, ...folder, sessionId: id, ref, image, trust, egress: this.egressFor(), lifetime })
    let info
    try {
      info = await this.createAsking(create)
    } catch (err) {
      // A session that was never made leaves no clone (nor snapshot) behind: both go to trash.
      if (!(await workspaces.get(id).catch(() => undefined))) {
        await new CloneManager({ baseDir: this.opts.baseDir }).removeSessionClone(id).catch(() => {})
      }
      throw err
    }
    if (keep) {
      this.opts.kept.write({ session: id, title, projectDir, createdAt: new Date().toISOString() })
      this.opts.kept.hold(id)
    }
    return this.bind(id, title, info, keep)
  }

  /** The session `id` made ready for tools: its first shell, its log folder, its entry. */
  async bind(id, title, info, kept) {
    if (this.closing) {
      await this.end(id, kept).catch(() => {})
      throw shuttingDown()
    }
    const logDir = this.opts.logs.dirFor(id, kept)
    const session = new Session({ id, title, info, kept, logDir, workspaces: this.opts.workspaces })
    await session.start()
    this.open.set(id, session)
    return session
  }

  /**
   * Takes up a session an earlier server kept for this project (`session_open` with its id).
   * @param {string} id
   */
  attach(id) {
    return this.track(this.attachKept(id))
  }

  async attachKept(id) {
    if (this.closing) throw shuttingDown()
    if (this.open.has(id)) return this.open.get(id)
    const record = this.opts.kept.read(id)
    if (!record || record.projectDir !== this.opts.projectDir) {
      throw invalid(`no session '${id}' was kept for ${this.opts.projectDir} (session_list lists the open and kept ones)`)
    }
    const info = await this.opts.workspaces.get(id)
    if (!info) {
      this.opts.kept.remove(id)
      throw invalid(`the kept session '${id}' is gone (its container and clone were removed outside this server)`)
    }
    if (!this.opts.kept.hold(id)) throw new ToolError('SESSION_BUSY', `the kept session '${id}' is open in another server (pid ${this.opts.kept.holder(id)}); close it there first`)
    try {
      return await this.bind(id, record.title, info, true)
    } catch (err) {
      this.opts.kept.release(id)
      throw err
    }
  }

  /** Kept sessions of this project that no server has open, as `{ record, info }`. */
  async keptElsewhere() {
    const records = this.opts.kept.of(this.opts.projectDir).filter((r) => !this.open.has(r.session) && this.opts.kept.holder(r.session) === undefined)
    const found = await Promise.all(records.map(async (record) => ({ record, info: await this.opts.workspaces.get(record.session).catch(() => undefined) })))
    return found.filter((f) => f.info)
  }

  /**
   * `create(trust)` with the server's trust; when devcontainer.json asks for more, the
   * user is asked (elicitation) and, if they allow it, `create` runs again with it.
   */
  async createAsking(create) {
    try {
      return await create(this.opts.trust)
    } catch (err) {
      if (err?.code !== 'DEVCONTAINER' || !Array.isArray(err.refusals) || err.refusals.length === 0) throw err
      const granted = withGrants(this.opts.trust, err.refusals)
      const refuse = (why) => Object.assign(new ToolError('DEVCONTAINER', `${err.message}\n${why}: start the server with --trust '${JSON.stringify(granted)}' to allow it.`), { refusals: err.refusals })
      if (!this.opts.ask.canAsk()) throw refuse('The client cannot ask the user')
      if (!(await this.opts.ask.devcontainer(err.refusals))) throw refuse('The user did not allow it')
      return create(granted)
    }
  }

  /**
   * The session a tool acts in: the one named; without a name the one open session (with
   * --auto-session and none open, one opened, unless `mayOpen` is false).
   * @param {string | undefined} id
   */
  async get(id, mayOpen = true) {
    if (id !== undefined) {
      const session = this.open.get(id)
      if (session) return session
      const kept = this.opts.kept.read(id)?.projectDir === this.opts.projectDir
      throw invalid(`no session '${id}' is open in this server${kept ? ' (it is a kept session: session_open with session attaches it)' : ''}; session_list lists them`)
    }
    while (this.opening.size) await Promise.allSettled([...this.opening])
    const open = this.list()
    if (open.length === 1) return open[0]
    if (open.length > 1) {
      throw Object.assign(new ToolError('SESSION_AMBIGUOUS', `${open.length} sessions are open: name one with session (${open.map((s) => `${s.id} "${s.title}"`).join(', ')})`), { sessions: open.map((s) => s.id) })
    }
    if (!this.opts.autoSession || !mayOpen) throw new ToolError('NO_SESSION', 'no session is open: open one with session_open (session_list also shows sessions kept by an earlier server)')
    this.autoOpened ??= this.openSession({ title: 'default' }).finally(() => (this.autoOpened = undefined))
    return this.autoOpened
  }

  list() {
    return [...this.open.values()]
  }

  /** The session put back to checkpoint `checkpoint`: its commands stopped first. */
  async restore(id, checkpoint) {
    const session = await this.get(id, false)
    this.opts.commands.closeSession(session.id)
    session.terminateAll()
    await this.opts.workspaces.restore(session.id, checkpoint)
    await session.rebind()
    return session
  }

  /** A new session forked from `fromId` (from a checkpoint of it, or from it now). */
  fork(fromId, { title, checkpoint }) {
    return this.track(this.forkSession(fromId, { title, checkpoint }))
  }

  async forkSession(fromId, { title, checkpoint }) {
    if (this.closing) throw shuttingDown()
    const from = await this.get(fromId, false)
    const id = newSessionId(title)
    const info = await this.opts.workspaces.fork(from.id, { sessionId: id, checkpoint })
    const { keep } = this.opts
    if (keep) {
      this.opts.kept.write({ session: id, title, projectDir: this.opts.projectDir, createdAt: new Date().toISOString() })
      this.opts.kept.hold(id)
    }
    return this.bind(id, title, info, keep)
  }

  /** What the session becomes: kept (stopped) or removed, its logs with it. */
  async end(id, kept) {
    if (kept) {
      await this.opts.workspaces.stop(id)
      this.opts.kept.release(id)
      return
    }
    await this.opts.workspaces.destroy(id)
    this.opts.kept.remove(id)
    this.opts.logs.remove(id)
  }

  /**
   * Closes a session (the one open, when none is named). Without --keep its container is
   * removed and clone moved to trash; with it, stopped and kept.
   */
  async close(id) {
    const session = await this.get(id, false)
    this.open.delete(session.id)
    this.opts.commands.closeSession(session.id)
    session.terminateAll()
    await this.end(session.id, this.opts.keep)
    return session
  }

  /**
   * Every session closed, as the server ends: kept ones (--keep, or attached from an
   * earlier server) stopped, the others removed; failures are reported, not thrown.
   */
  async closeAll() {
    this.closing = true
    await Promise.allSettled([...this.opening])
    const results = await Promise.allSettled(
      this.list().map(async (s) => {
        this.open.delete(s.id)
        this.opts.commands.closeSession(s.id)
        s.terminateAll()
        await this.end(s.id, s.kept)
      }),
    )
    this.opts.logs.removeAll()
    return results.filter((r) => r.status === 'rejected').map((r) => r.reason)
  }
}

module.exports = { Sessions, newSessionId }
