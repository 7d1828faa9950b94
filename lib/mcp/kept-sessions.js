// What a later server needs to take up a session an earlier one kept (--keep): a record
// per session under `<base-dir>/mcp/sessions/<id>.json` with its title and the project it
// was opened on, and a lock file naming the server that has it open now (its pid, made
// with O_EXCL), so two servers never work in one session at once. A lock whose server is
// gone (killed) is taken over.
'use strict'

const { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require('node:fs')
const { join } = require('node:path')

const ID = /^[a-z0-9][a-z0-9-]{0,80}$/

function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err?.code === 'EPERM'
  }
}

class KeptSessions {
  /** @param {string} baseDir */
  constructor(baseDir) {
    this.dir = join(baseDir, 'mcp', 'sessions')
  }

  path(id) {
    return join(this.dir, `${id}.json`)
  }

  /** The record of `id`, or undefined. */
  read(id) {
    if (!ID.test(id)) return undefined
    try {
      const record = JSON.parse(readFileSync(this.path(id), 'utf8'))
      return record && typeof record === 'object' && record.session === id ? record : undefined
    } catch {
      return undefined
    }
  }

  /** Every record of `projectDir`. */
  of(projectDir) {
    let names = []
    try {
      names = readdirSync(this.dir)
    } catch {
      return []
    }
    return names
      .filter((n) => n.endsWith('.json'))
      .map((n) => this.read(n.slice(0, -5)))
      .filter((r) => r && r.projectDir === projectDir)
  }

  /** Writes the record whole (a temp file renamed over it). */
  write(record) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    const temp = `${this.path(record.session)}.${process.pid}.tmp`
    writeFileSync(temp, `${JSON.stringify(record)}\n`, { mode: 0o600 })
    renameSync(temp, this.path(record.session))
  }

  lockPath(id) {
    return join(this.dir, `${id}.lock`)
  }

  /** The pid of the live server that has the session open, other than this one, or undefined. */
  holder(id) {
    try {
      const pid = Number(readFileSync(this.lockPath(id), 'utf8'))
      return Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid) ? pid : undefined
    } catch {
      return undefined
    }
  }

  /** Takes the session for this server; false when another live server has it. */
  hold(id) {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(this.lockPath(id), String(process.pid), { flag: 'wx', mode: 0o600 })
        return true
      } catch (err) {
        if (err?.code !== 'EEXIST') throw err
        if (this.holder(id) !== undefined) return false
        rmSync(this.lockPath(id), { force: true })
      }
    }
    return false
  }

  /** Lets the session go, if this server held it. */
  release(id) {
    try {
      if (Number(readFileSync(this.lockPath(id), 'utf8')) === process.pid) rmSync(this.lockPath(id), { force: true })
    } catch {}
  }

  /** The record and its lock, gone. */
  remove(id) {
    if (!ID.test(id)) return
    rmSync(this.path(id), { force: true })
    this.release(id)
  }
}

module.exports = { KeptSessions }
