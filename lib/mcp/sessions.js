// The sessions one MCP connection works in: each a `Workspaces` session (a clone of the
// project plus its container) with the FileIO and shells bound to it. A tool called
// without a session id gets the connection's default session, opened on first use.
// Without --keep sessions are `lifetime: 'process'` and go when the server ends; with it
// they are `'session'`, stopped at the end and left for `container-isolation ls/export`.
'use strict'

const { randomBytes } = require('node:crypto')
const { CloneManager, readDevcontainerConfig } = require('../index.js')
const { ToolError, invalid } = require('./results.js')
const { withGrants } = require('./ask-user.js')

/** One open session: its workspace, its files, and shells, one per running command. */
class Session {
  constructor(id, title, info, env, workspaces) {
    this.id = id
    this.title = title
    this.info = info
    this.root = info.containerMountPath
    this.fileIO = env.fileIO
    this.workspaces = workspaces
    this.idle = [env.shell]
    this.running = new Set()
    this.threads = 1
  }

  /** A shell no command is running in (`DockerShell` runs one command at a time). */
  async acquireShell() {
    const shell = this.idle.pop() ?? (await this.workspaces.environment(this.id, `mcp-${this.threads++}`)).shell
    this.running.add(shell)
    return shell
  }

  release(shell) {
    this.running.delete(shell)
    this.idle.push(shell)
  }

  /** Stops every running command's whole process tree. */
  terminateAll() {
    for (const shell of this.running) shell.terminate()
  }
}

/** A session id from a title: its words, then random hex (`fix-login-3f9a2c`). */
function newSessionId(title) {
  const words = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '')
  return `${words || 'mcp'}-${randomBytes(3).toString('hex')}`
}

class Sessions {
  /**
   * @param {{ workspaces: any, projectDir: string, image?: string, egress?: string | object,
   *   trust?: object, keep: boolean, baseDir?: string, ask: import('./ask-user.js').AskUser }} opts
   */
  constructor(opts) {
    this.opts = opts
    /** @type {Map<string, Session>} */
    this.open = new Map()
    this.defaultSession = undefined
    this.closing = false
  }

  /** The egress a new session gets: a policy's undecided hosts are asked of the user. */
  egressFor() {
    const { egress, ask } = this.opts
    if (egress === undefined || typeof egress === 'string') return egress
    return { ...egress, onRequest: (request) => ask.egress(request, this.open.get(request.sessionId)?.title) }
  }

  /**
   * Creates a session; a devcontainer.json asking beyond the session is put to the user,
   * and created again with what they grant.
   * @param {{ title: string, ref?: string }} request
   */
  async openSession({ title, ref }) {
    if (this.closing) throw new ToolError('CONTAINER_NOT_RUNNING', 'the server is shutting down')
    const { workspaces, projectDir, image, keep } = this.opts
    if (!image && !(await readDevcontainerConfig(projectDir))) {
      throw invalid(`the project ${projectDir} has no devcontainer.json and the server no image: start it with --image IMG (or set CONTAINER_ISOLATION_IMAGE)`)
    }
    const id = newSessionId(title)
    const create = (trust) =>
      // A folder without a commit is snapshotted, never initialised: nothing is written into it.
      workspaces.create({ projectDir, plainFolder: 'snapshot', sessionId: id, ref, image, trust, egress: this.egressFor(), lifetime: keep ? 'session' : 'process' })
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
    if (this.closing) {
      await (keep ? workspaces.stop(id) : workspaces.destroy(id)).catch(() => {})
      throw new ToolError('CONTAINER_NOT_RUNNING', 'the server is shutting down')
    }
    const env = await workspaces.environment(id, 'mcp-0')
    const session = new Session(id, title, info, env, workspaces)
    this.open.set(id, session)
    return session
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
   * The session a tool acts in: the one named, else the connection's default session,
   * opened on first use.
   * @param {string | undefined} id
   */
  async get(id) {
    if (id !== undefined) {
      const session = this.open.get(id)
      if (!session) throw invalid(`no session '${id}' is open in this server (session_list lists them; session_open opens one)`)
      return session
    }
    this.defaultSession ??= this.openSession({ title: 'default' })
    try {
      return await this.defaultSession
    } catch (err) {
      this.defaultSession = undefined
      throw err
    }
  }

  list() {
    return [...this.open.values()]
  }

  /** Without --keep: container removed, clone to trash. With it: stopped, kept. */
  async close(id) {
    const session = id === undefined ? await this.defaultSession?.catch(() => undefined) : await this.get(id)
    if (!session) throw invalid('no session to close: name one (session_list lists them)')
    this.open.delete(session.id)
    if (this.defaultSession && (await this.defaultSession.catch(() => undefined)) === session) this.defaultSession = undefined
    session.terminateAll()
    if (this.opts.keep) await this.opts.workspaces.stop(session.id)
    else await this.opts.workspaces.destroy(session.id)
    return session
  }

  /** Every session closed, as the server ends; failures are reported, not thrown. */
  async closeAll() {
    this.closing = true
    await this.defaultSession?.catch(() => {})
    const results = await Promise.allSettled(this.list().map((s) => this.close(s.id)))
    return results.filter((r) => r.status === 'rejected').map((r) => r.reason)
  }
}

module.exports = { Sessions, Session, newSessionId }
