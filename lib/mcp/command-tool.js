// run_command: the client's shell command, as given, in the session's container. Output
// lines go to the client as progress notifications while it runs (when the request has a
// progressToken); the client's notifications/cancelled, and the timeout, terminate() the
// command, which kills its whole process tree inside the container. The result keeps the
// last lines within a bound, as ShellResult does; the log file keeps everything.
'use strict'

const { z } = require('zod')
const { ToolError, ok, lastLines } = require('./results.js')
const { resolveIn, shown } = require('./paths.js')
const { INSIDE, session } = require('./tool-args.js')

const MAX_RESULT_LINES = 2000
const MAX_RESULT_BYTES = 64 * 1024
/** The session shell's own limit (`DockerShell`'s default timeoutMs). */
const MAX_TIMEOUT_MS = 300_000
const DEFAULT_TIMEOUT_MS = 120_000
/** Progress is sent at most this often, each with at most this much output. */
const PROGRESS_EVERY_MS = 100
const PROGRESS_MAX_BYTES = 16 * 1024
const QUIET_MS = 50

/**
 * In another folder than the workspace: `cd` to it, then the user's command under bash
 * (sh where there is none). Both reach the shell as positional parameters, never spliced.
 */
const IN_FOLDER = 'cd -- "$1" || exit 1; if command -v bash >/dev/null 2>&1; then exec bash -c "$2"; fi; exec sh -c "$2"'

let commands = 0

/**
 * Collects output lines and sends them as progress notifications, batched. The SDK's
 * client drops (and reports as an error) a notification read in the same chunk as the
 * response after it (typescript-sdk#2580), so none is sent as the command ends: lines
 * still pending then reach the client in the result only, and the result waits until
 * the last notification is QUIET_MS old.
 */
function progressReporter(extra, token) {
  let pending = []
  let pendingBytes = 0
  let dropped = 0
  let lines = 0
  let sent = 0
  let lastAt = 0
  let last = Promise.resolve()
  let timer
  const flush = () => {
    timer = undefined
    const message = pending.join('\n') + (dropped ? `\n… ${dropped} more line${dropped === 1 ? '' : 's'}` : '')
    pending = []
    pendingBytes = 0
    dropped = 0
    sent++
    lastAt = Date.now()
    last = extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: lines, message } }).catch(() => {})
  }
  return {
    line(text) {
      if (token === undefined) return
      lines++
      if (pendingBytes + text.length < PROGRESS_MAX_BYTES) {
        pending.push(text)
        pendingBytes += text.length + 1
      } else dropped++
      timer ??= setTimeout(flush, PROGRESS_EVERY_MS)
    },
    /** Stops sending; resolves (with the count sent) once the result may follow. */
    async finish() {
      clearTimeout(timer)
      await last
      const wait = lastAt + QUIET_MS - Date.now()
      if (sent > 0 && wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      return sent
    },
  }
}

const runCommand = {
  name: 'run_command',
  title: 'Run a command in the session',
  annotations: ({ egress }) => ({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: egress !== 'none' }),
  description: `Runs a shell command (bash, else sh) in the session's container, in its workspace folder or cwd, stdin closed; returns its exit code and the last output lines (up to 64 KiB; the log file has all). Output streams as progress notifications while it runs; cancelling the request, or the timeout (default 120 s, at most 300 s), kills the command's whole process tree. Network access goes through the session's egress policy. ${INSIDE}`,
  schema: z.object({
    session,
    command: z.string().min(1).describe('The shell command, as typed in a terminal'),
    cwd: z.string().min(1).optional().describe("The folder to run in, relative to the session's workspace folder (default: the workspace folder)"),
    timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional().describe('Milliseconds before the command is killed (default 120000)'),
  }),
  async run(args, { sessions, extra }) {
    const s = await sessions.get(args.session)
    const cwd = resolveIn(s.root, args.cwd)
    const progress = progressReporter(extra, extra._meta?.progressToken)
    const shell = await s.acquireShell()
    let timedOut = false
    const timeoutMs = args.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const timer = setTimeout(() => {
      timedOut = true
      shell.terminate()
    }, timeoutMs)
    const cancel = () => shell.terminate()
    extra.signal.addEventListener('abort', cancel, { once: true })
    const command = cwd === s.root ? args.command : ['sh', '-c', IN_FOLDER, 'sh', cwd, args.command]
    let result
    let notifications = 0
    try {
      if (extra.signal.aborted) throw new ToolError('INVALID_ARGUMENT', 'the request was cancelled before the command started')
      result = await shell.execute(command, {
        toolRequestId: `mcp-${process.pid}-${++commands}`,
        onOutput: (line) => progress.line(line.text),
        // A cancel or timeout that came before the command had started stops it now.
        onStart: () => (extra.signal.aborted || timedOut) && shell.terminate(),
      })
    } finally {
      clearTimeout(timer)
      extra.signal.removeEventListener('abort', cancel)
      s.release(shell)
      notifications = await progress.finish()
    }
    const { kept, omitted } = lastLines(result.output, MAX_RESULT_LINES, MAX_RESULT_BYTES)
    const omittedLines = omitted + (result.omittedLines ?? 0)
    const ended = timedOut
      ? `timed out after ${timeoutMs} ms and was killed`
      : result.signal
        ? `ended by ${result.signal}`
        : `exit code ${result.exitCode}`
    const head = `${ended} in ${Math.round(result.durationMs)} ms${cwd === s.root ? '' : ` (in ${shown(s.root, cwd)})`}${omittedLines ? `; ${omittedLines} earlier line${omittedLines === 1 ? '' : 's'} left out (log: ${result.logFilePath})` : ''}`
    return ok([head, ...kept.map((l) => l.text)].join('\n'), {
      exitCode: result.exitCode,
      signal: result.signal ?? null,
      timedOut,
      durationMs: result.durationMs,
      output: kept,
      omittedLines,
      logFilePath: result.logFilePath ?? null,
      progressNotifications: notifications,
    })
  },
}

module.exports = { runCommand }
