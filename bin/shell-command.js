// The CLI's `shell` command (and `exec -it`): a terminal in the session, wired to this one
// in raw mode. Its size and every resize are passed on, its exit code is the CLI's, and the
// local terminal is put back on every way out (the program's end, an error, a destroyed
// session, SIGTERM or SIGHUP to the CLI).
'use strict'

const os = require('node:os')
const { UsageError, withProgress } = require('./cli-common.js')

/** The local terminal's size. */
function size() {
  return { cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 }
}

async function shell(args, workspaces) {
  const [sessionId] = args._
  if (!sessionId) throw new UsageError('shell needs a session')
  const stdin = process.stdin
  if (!stdin.isTTY) {
    console.error('shell needs a terminal on stdin, and stdin is not one (use exec -- <command...> without a terminal)')
    return 2
  }
  const command = args.rest.length > 0 ? args.rest : undefined
  const terminal = await withProgress('starting session', workspaces.terminal(sessionId, { command, ...size() }))
  const restore = () => {
    if (stdin.isTTY && stdin.isRaw) stdin.setRawMode(false)
  }
  // Keystrokes go in the order typed: each write waits for the one before.
  let typed = Promise.resolve()
  const onInput = (chunk) => {
    typed = typed.then(() => terminal.write(chunk)).catch(() => {})
  }
  const onResize = () => {
    const { cols, rows } = size()
    terminal.resize(cols, rows).catch(() => {})
  }
  const onSignal = (signal) => {
    restore()
    terminal.kill('SIGKILL').finally(() => process.exit(128 + os.constants.signals[signal]))
  }
  process.on('exit', restore)
  process.on('SIGWINCH', onResize)
  process.on('SIGTERM', onSignal)
  process.on('SIGHUP', onSignal)
  stdin.setRawMode(true)
  stdin.on('data', onInput)
  stdin.resume()
  terminal.onData((chunk) => process.stdout.write(chunk))
  try {
    const exit = await terminal.wait()
    return exit.exitCode
  } catch (err) {
    restore()
    process.stdout.write('\r\n')
    throw err
  } finally {
    restore()
    stdin.off('data', onInput)
    stdin.pause()
    process.off('SIGWINCH', onResize)
    process.off('SIGTERM', onSignal)
    process.off('SIGHUP', onSignal)
  }
}

module.exports = { commands: { shell } }
