// A run_command with tty: true — the command in a terminal of its session (a
// pseudo-terminal the session agent opens), its output fed to a headless terminal emulator
// (@xterm/headless), so that a client reads the screen as a person would see it and types
// keys into it with command_input: a prompt answered, an interactive program driven. It
// has a Command's life (its id, kill, timeout, the session's bound on running commands);
// its output is the screen's rows, not numbered lines.
'use strict'

const { Terminal: Screen } = require('@xterm/headless')
const { Command } = require('./command.js')
const { ToolError } = require('./results.js')

/** Runs the command under bash, else sh, as run_command does; never spliced into a string. */
const UNDER_SHELL = 'if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; fi; exec sh -c "$1"'

class TtyCommand extends Command {
  /**
   * @param {{ session: string, command: string, cwd: string, timeoutMs: number, cols: number, rows: number }} opts
   */
  constructor(opts) {
    super(opts)
    this.tty = true
    this.cols = opts.cols
    this.rows = opts.rows
    this.screen = new Screen({ cols: opts.cols, rows: opts.rows, scrollback: 0, allowProposedApi: true })
    this.terminal = undefined
    /** Resolves once the screen has taken every chunk written so far. */
    this.parsed = Promise.resolve()
    this.lastOutputAt = Date.now()
    this.outputBytes = 0
  }

  /**
   * Opens the terminal in `shell`'s container (at `cwd`, an absolute container path) and
   * runs the command in it; the shell goes back through `release` once it ends.
   */
  run(shell, cwd, release) {
    this.shell = shell
    const timer = setTimeout(() => this.kill('timedOut'), this.timeoutMs)
    const command = ['sh', '-c', UNDER_SHELL, 'sh', this.command]
    shell
      .terminal({ command, cols: this.cols, rows: this.rows, cwd })
      .then(async (terminal) => {
        this.terminal = terminal
        terminal.onData((chunk) => {
          this.lastOutputAt = Date.now()
          this.outputBytes += chunk.length
          this.parsed = new Promise((resolve) => this.screen.write(chunk, resolve))
        })
        if (this.killedBy) await terminal.kill('SIGKILL')
        const exit = await terminal.wait()
        await this.parsed
        this.end({ exitCode: exit.exitCode, signal: exit.signal ?? null, durationMs: Date.now() - this.startedAt, logFilePath: null })
      })
      .catch((err) => this.fail(err))
      .finally(() => {
        clearTimeout(timer)
        release(shell)
      })
  }

  /** Ends every process of the terminal. */
  kill(why = 'killed') {
    if (!this.running) return
    this.killedBy ??= why
    this.terminal?.kill('SIGKILL').catch(() => {})
  }

  /** Types `keys` into the terminal, as given (`\r` is Enter, `\u0003` Ctrl-C). */
  async input(keys) {
    if (!this.running) throw new ToolError('COMMAND_ENDED', `command ${this.id} has ended: its keys would reach nothing`)
    if (!this.terminal) throw new ToolError('COMMAND_STARTING', `command ${this.id} has no terminal yet: read its screen with command_output first`)
    this.lastOutputAt = Date.now()
    await this.terminal.write(keys)
  }

  /**
   * Resolves when the command has ended, its screen has been still for `quietMs` (after
   * its last output or keys), `ms` have passed, or `signal` aborts; the screen then holds
   * everything written until then.
   */
  async settle(ms, quietMs, signal) {
    const until = Date.now() + ms
    while (this.running && !signal?.aborted && Date.now() < until && Date.now() - this.lastOutputAt < quietMs) {
      const left = Math.min(until - Date.now(), quietMs - (Date.now() - this.lastOutputAt))
      await this.wait(Math.max(10, left), signal)
    }
    await this.parsed
  }

  /** The screen's rows as lines (trailing blanks and blank rows left out), as `read` shows them. */
  screenLines() {
    const buffer = this.screen.buffer.active
    const rows = []
    for (let y = 0; y < this.rows; y++) rows.push((buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '').trimEnd())
    while (rows.length > 0 && rows[rows.length - 1] === '') rows.pop()
    return rows.map((text) => ({ stream: 'screen', text }))
  }

  read() {
    const lines = this.screenLines()
    this.total = lines.length
    return { lines, fromOffset: 0, nextOffset: lines.length, droppedLines: 0 }
  }

  tail() {
    return this.read()
  }

  describe(view) {
    const cursor = this.screen.buffer.active
    return { ...super.describe(view), tty: { cols: this.cols, rows: this.rows, cursorRow: cursor.cursorY, cursorColumn: cursor.cursorX } }
  }
}

module.exports = { TtyCommand }
