// Where one server's command logs go: a folder of its own per session, never shared with
// another server. A session that goes with the server has its folder under the server's
// own in the temp folder (`container-isolation/mcp-<pid>-<random>/<session>`), removed
// with the session, and all of it when the server ends. A kept session's logs live beside
// its record (`<base-dir>/mcp/logs/<session>`), for a later server to go on writing.
'use strict'

const { mkdirSync, rmSync } = require('node:fs')
const { randomBytes } = require('node:crypto')
const { tmpdir } = require('node:os')
const { join } = require('node:path')

class SessionLogs {
  /** @param {string} baseDir */
  constructor(baseDir) {
    this.keptRoot = join(baseDir, 'mcp', 'logs')
    this.root = join(tmpdir(), 'container-isolation', `mcp-${process.pid}-${randomBytes(4).toString('hex')}`)
  }

  /** The session's log folder, made (owner only). */
  dirFor(sessionId, kept) {
    const dir = join(kept ? this.keptRoot : this.root, sessionId)
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    return dir
  }

  /** The session's logs, gone (links inside are removed, never followed). */
  remove(sessionId) {
    for (const root of [this.root, this.keptRoot]) rmSync(join(root, sessionId), { recursive: true, force: true })
  }

  /** The server's own folder, gone; kept sessions' logs stay. */
  removeAll() {
    rmSync(this.root, { recursive: true, force: true })
  }
}

module.exports = { SessionLogs }
