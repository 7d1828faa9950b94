// One session open in the server: its workspace (`Workspaces` info), its files, and its
// shells — one per command running at once (`DockerShell` runs one command at a time),
// made as needed with the session's own log folder and a per-command bound long enough
// for commands in the background (the server kills each at its own timeoutMs).
'use strict'

const { ToolError } = require('./results.js')

/** The shells' own bound, above any timeoutMs a client may give. */
const SHELL_TIMEOUT_MS = 86_400_000
/** Commands that may run at once in one session. */
const MAX_RUNNING = 16

class Session {
  /**
   * @param {{ id: string, title: string, info: any, kept: boolean, logDir: string, workspaces: any }} opts
   */
  constructor({ id, title, info, kept, logDir, workspaces }) {
    this.id = id
    this.title = title
    this.info = info
    this.kept = kept
    this.root = info.containerMountPath
    this.logDir = logDir
    this.workspaces = workspaces
    this.idle = []
    this.running = new Set()
    this.threads = 0
    this.fileIO = undefined
  }

  async environment() {
    return this.workspaces.environment(this.id, `mcp-${this.threads++}`, { logDir: this.logDir, timeoutMs: SHELL_TIMEOUT_MS })
  }

  /** Binds the files and a first shell; a stopped (kept) session's container is started. */
  async start() {
    const env = await this.environment()
    this.fileIO = env.fileIO
    this.idle.push(env.shell)
  }

  /** Binds the files and a first shell again (the container was made again: a restore). */
  async rebind() {
    this.terminateAll()
    this.idle = []
    this.running = new Set()
    await this.start()
  }

  /** A shell no command is running in. */
  async acquireShell() {
    if (this.running.size >= MAX_RUNNING) throw new ToolError('LIMIT_EXCEEDED', `${MAX_RUNNING} commands are running in session ${this.id}: wait for one (command_output) or stop one (command_kill)`)
    const shell = this.idle.pop() ?? (await this.environment()).shell
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

module.exports = { Session }
