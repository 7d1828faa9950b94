// One command a client started with run_command: it runs in a shell of its session until
// it ends, is killed (command_kill, its session closing, a cancelled foreground call) or
// reaches its timeout, whether or not a client is waiting. Its output lines are numbered
// from 0 and kept in memory within a bound (the oldest dropped first; the log file keeps
// every line), so a client reads them from any offset while it runs and after.
'use strict'

const { ToolError } = require('./results.js')

const MAX_KEPT_LINES = 20_000
const MAX_KEPT_BYTES = 8 * 1024 * 1024

let started = 0

class Command {
  /**
   * @param {{ session: string, command: string, cwd: string, timeoutMs: number }} opts
   */
  constructor({ session, command, cwd, timeoutMs }) {
    this.id = `cmd-${++started}`
    this.session = session
    this.command = command
    this.cwd = cwd
    this.timeoutMs = timeoutMs
    this.startedAt = Date.now()
    /** Kept lines; `lines[head]` is line number `first` (those before `head` are dropped). */
    this.lines = []
    this.head = 0
    this.first = 0
    this.bytes = 0
    this.total = 0
    this.listeners = new Set()
    this.status = 'running'
    this.result = undefined
    this.error = undefined
    this.sealed = false
    this.killedBy = undefined
    this.shell = undefined
    this.done = new Promise((resolve) => (this.finish = resolve))
  }

  /**
   * Runs `argv` in `shell` (which the caller gets back through `release` once it ends).
   * @param {any} shell a DockerShell no other command is using
   * @param {string | string[]} argv
   * @param {string} toolRequestId
   * @param {(shell: any) => void} release
   */
  run(shell, argv, toolRequestId, release) {
    this.shell = shell
    const timer = setTimeout(() => this.kill('timedOut'), this.timeoutMs)
    shell
      .execute(argv, {
        toolRequestId,
        onOutput: (line) => this.take(line),
        // A kill that came before the command had started stops it now.
        onStart: () => this.killedBy && shell.terminate(),
      })
      .then(
        (result) => this.end(result),
        (err) => this.fail(err),
      )
      .finally(() => {
        clearTimeout(timer)
        release(shell)
      })
  }

  take(line) {
    if (this.sealed) return
    const kept = { stream: line.stream, text: line.text }
    this.lines.push(kept)
    this.bytes += Buffer.byteLength(kept.text) + 1
    this.total++
    while (this.lines.length - this.head > MAX_KEPT_LINES || this.bytes > MAX_KEPT_BYTES) {
      this.bytes -= Buffer.byteLength(this.lines[this.head++].text) + 1
      this.first++
    }
    // Dropped lines let go in one copy now and then (a shift per line copies them all).
    if (this.head >= MAX_KEPT_LINES) {
      this.lines = this.lines.slice(this.head)
      this.head = 0
    }
    for (const listener of this.listeners) listener(kept)
  }

  /** The shell's result: `onOutput` has had every line by then (docs/contract.md §4). */
  end(result) {
    this.sealed = true
    this.result = result
    this.status = this.killedBy ?? (result.signal ? 'killed' : 'exited')
    this.finish()
  }

  fail(err) {
    this.sealed = true
    this.error = err
    this.status = this.killedBy ?? 'failed'
    this.finish()
  }

  get running() {
    return this.status === 'running'
  }

  /**
   * Stops the command's whole process tree in the container.
   * @param {'killed' | 'timedOut'} why
   */
  kill(why = 'killed') {
    if (!this.running) return
    this.killedBy ??= why
    this.shell?.terminate()
  }

  /** Resolves when the command has ended, `ms` have passed or `signal` aborts. */
  wait(ms, signal) {
    if (!this.running || ms <= 0) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      signal?.addEventListener('abort', done, { once: true })
      this.done.then(done)
    })
  }

  /**
   * Lines from `offset` on, within `maxLines` and `maxBytes`; lines no longer kept are
   * counted, not shown.
   */
  read(offset, maxLines, maxBytes) {
    const from = Math.max(offset, this.first)
    const out = []
    let bytes = 0
    for (let n = from; n < this.total && out.length < maxLines; n++) {
      const line = this.lines[n - this.first + this.head]
      const size = Buffer.byteLength(line.text) + 1
      if (bytes + size > maxBytes && out.length > 0) break
      bytes += size
      out.push(line)
    }
    return { lines: out, fromOffset: from, nextOffset: from + out.length, droppedLines: Math.max(0, Math.min(this.first, this.total) - offset) }
  }

  /** The last lines that fit, as a finished foreground command shows them. */
  tail(maxLines, maxBytes) {
    let bytes = 0
    let from = this.total
    while (from > this.first && this.total - from < maxLines) {
      const size = Buffer.byteLength(this.lines[from - 1 - this.first + this.head].text) + 1
      if (bytes + size > maxBytes) break
      bytes += size
      from--
    }
    return this.read(from, maxLines, maxBytes)
  }

  /** What a client is told about the command, with `view` (a `read` or `tail`) as its output. */
  describe(view) {
    const failed = this.error && { code: typeof this.error.code === 'string' ? this.error.code : 'INTERNAL_ERROR', message: String(this.error.message ?? this.error) }
    return {
      commandId: this.id,
      session: this.session,
      command: this.command,
      cwd: this.cwd,
      status: this.status,
      running: this.running,
      exitCode: this.result?.exitCode ?? null,
      signal: this.result?.signal ?? null,
      timedOut: this.status === 'timedOut',
      error: failed ?? null,
      durationMs: Math.round(this.result?.durationMs ?? Date.now() - this.startedAt),
      output: view.lines,
      fromOffset: view.fromOffset,
      nextOffset: view.nextOffset,
      totalLines: this.total,
      logFilePath: this.result?.logFilePath ?? null,
    }
  }
}

/** The commands of one server, by id; each session's finished ones within a bound. */
class Commands {
  constructor() {
    /** @type {Map<string, Command>} */
    this.byId = new Map()
  }

  add(command) {
    this.byId.set(command.id, command)
    const finished = [...this.byId.values()].filter((c) => c.session === command.session && !c.running)
    for (const old of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_PER_SESSION))) this.byId.delete(old.id)
  }

  /** The command `id`, in `session` when one is named. */
  get(id, session) {
    const command = this.byId.get(id)
    if (!command || (session !== undefined && command.session !== session)) {
      throw new ToolError('COMMAND_NOT_FOUND', `no command '${id}'${session === undefined ? '' : ` in session '${session}'`} (run_command returns the commandId; a closed session's commands are gone)`)
    }
    return command
  }

  running(session) {
    return [...this.byId.values()].filter((c) => c.session === session && c.running)
  }

  /** Every command of the session killed and forgotten, as the session closes. */
  closeSession(session) {
    for (const c of [...this.byId.values()]) {
      if (c.session !== session) continue
      c.kill()
      this.byId.delete(c.id)
    }
  }
}

const MAX_FINISHED_PER_SESSION = 32

module.exports = { Command, Commands }
