// Which branches session_export may write, and when it may move one that exists: the
// user's branches are the host's. Only names under the prefix the person starting the
// server chose (default `session/`); `force` only when that person allowed it
// (--allow-force-export) or the user says yes each time (elicitation). Everything here is
// decided before anything is written.
'use strict'

const { invalid } = require('./results.js')

class ExportPolicy {
  /**
   * @param {{ prefix: string, allowForce: boolean, ask: import('./ask-user.js').AskUser }} opts
   */
  constructor({ prefix, allowForce, ask }) {
    this.prefix = prefix
    this.allowForce = allowForce
    this.ask = ask
  }

  /** Whether an export can move an existing branch in this connection (for annotations). */
  forceUsable() {
    return this.allowForce || this.ask.canAsk()
  }

  /** The session's branch when none is named. */
  defaultBranch(sessionId) {
    return `${this.prefix}${sessionId}`
  }

  /**
   * `branch` if it is under the prefix; refuses it otherwise.
   * @param {string} branch
   */
  checkBranch(branch) {
    if (branch.startsWith(this.prefix) && branch.length > this.prefix.length) return branch
    throw invalid(
      `branch '${branch}' is outside ${this.prefix}: this server exports only to branches under ${this.prefix} (default ${this.prefix}<session id>); the person who starts it chooses that prefix with --export-prefix`,
    )
  }

  /** Refuses `force` up front when nothing could allow it. */
  checkForce() {
    if (!this.forceUsable()) throw this.forceRefusal('this client cannot ask the user')
  }

  forceRefusal(why) {
    return invalid(
      `force is not allowed (${why}): this server moves no existing branch unless the person who starts it allows that with --allow-force-export, or the user agrees when asked; export without force, or to a new branch under ${this.prefix}`,
    )
  }

  /**
   * Resolves when `force` may be used for this export; asks the user unless the server
   * allows it.
   * @param {{ branch: string, repository: string, sessionId: string, title?: string }} request
   */
  async permitForce(request) {
    if (this.allowForce) return
    this.checkForce()
    if (!(await this.ask.forceExport(request))) throw this.forceRefusal('the user did not allow it')
  }
}

module.exports = { ExportPolicy }
