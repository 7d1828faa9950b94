// run_command, command_output, command_kill: the client's shell commands in the session's
// container, the way MCP clients can live with. run_command waits for the command at most
// waitMs (default 45 s, under the 60 s at which common clients give up), streaming output
// as progress notifications; a command still running then goes on in the background and
// the result carries its commandId; `background: true` returns at once. command_output
// reads a command's lines from an offset and waits for its end within a bound;
// command_kill stops it. A cancelled run_command (notifications/cancelled) and timeoutMs
// kill the command's whole process tree inside the container. With `tty: true` the command
// runs in a terminal: its output is the screen's text, and command_input types keys into it.
'use strict'

const { z } = require('zod')
const { ok } = require('./results.js')
const { resolveIn, shown } = require('./paths.js')
const { INSIDE, session, strict } = require('./tool-args.js')
const { Command } = require('./command.js')
const { TtyCommand } = require('./tty-command.js')
const { ToolError } = require('./results.js')
const { progressReporter } = require('./progress-reporter.js')

const MAX_RESULT_LINES = 2000
const MAX_RESULT_BYTES = 64 * 1024
const DEFAULT_TIMEOUT_MS = 600_000
const MAX_TIMEOUT_MS = 86_400_000
const DEFAULT_WAIT_MS = 45_000
const MAX_WAIT_MS = 1_800_000
/** How long command_kill waits for the process tree to be gone. */
const KILL_WAIT_MS = 10_000
/** A terminal's screen counts as settled once it has not changed for this long. */
const QUIET_MS = 700
/** How long command_input waits for the screen to settle unless told. */
const DEFAULT_INPUT_WAIT_MS = 5_000

/**
 * In another folder than the workspace: `cd` to it, then the user's command under bash
 * (sh where there is none). Both reach the shell as positional parameters, never spliced.
 */
const IN_FOLDER = 'cd -- "$1" || exit 1; if command -v bash >/dev/null 2>&1; then exec bash -c "$2"; fi; exec sh -c "$2"'

let requests = 0

const commandResult = z.object({
  commandId: z.string(),
  session: z.string(),
  command: z.string(),
  cwd: z.string().describe('Relative to the workspace folder'),
  status: z.enum(['running', 'exited', 'killed', 'timedOut', 'failed']),
  running: z.boolean(),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  error: z.object({ code: z.string(), message: z.string() }).nullable().describe('Why the command could not run (status failed)'),
  durationMs: z.number().int(),
  output: z.array(z.object({ stream: z.string(), text: z.string() })).describe('Lines fromOffset up to nextOffset'),
  fromOffset: z.number().int().describe('The number of the first line in output (lines are numbered from 0)'),
  nextOffset: z.number().int().describe('Where command_output reads on'),
  totalLines: z.number().int(),
  logFilePath: z.string().nullable().describe("The host file with every line, once the command has ended"),
  progressNotifications: z.number().int().optional(),
  tty: z.object({ cols: z.number().int(), rows: z.number().int(), cursorRow: z.number().int(), cursorColumn: z.number().int() }).optional().describe("A terminal command's size and cursor (output is then the screen's rows)"),
  note: z.string(),
})

/** What the model is told to do next. */
function noteFor(c, view) {
  if (c.tty && c.running) return `running in a terminal as ${c.id}; output is its screen now: command_input types keys (\\r is Enter, \\u0003 Ctrl-C), command_output reads the screen again, command_kill stops it`
  if (c.running) return `still running in the background as ${c.id}: command_output reads on from offset ${view.nextOffset} and waits for its end; command_kill stops it`
  const before = view.fromOffset > 0 ? `; lines 0-${view.fromOffset - 1} are not shown${c.result?.logFilePath ? ` (all are in ${c.result.logFilePath})` : ''}` : ''
  const ended = c.status === 'timedOut' ? `timed out after ${c.timeoutMs} ms and was killed` : c.status === 'killed' ? `was killed${c.result?.signal ? ` (${c.result.signal})` : ''}` : c.status === 'failed' ? 'could not run' : `exited with ${c.result.exitCode}`
  const more = view.nextOffset < c.total ? `; more lines from offset ${view.nextOffset}` : ''
  return `${ended}${before}${more}`
}

/** The command's state with `view` as its output, for a result. */
function resultOf(c, view, extra = {}) {
  return ok({ ...c.describe(view), ...extra, note: noteFor(c, view) })
}

/** Waits for `c` up to `waitMs`, reporting its lines as progress; a cancelled request kills it. */
async function follow(c, waitMs, extra) {
  const progress = progressReporter(extra, extra._meta?.progressToken, waitMs)
  const onLine = (line) => progress.line(line.text)
  c.listeners.add(onLine)
  const cancel = () => c.kill()
  extra.signal.addEventListener('abort', cancel, { once: true })
  try {
    await c.wait(waitMs)
    // A cancelled call waits for the kill to land, so nothing of it keeps running unseen.
    if (extra.signal.aborted) await c.wait(KILL_WAIT_MS)
  } finally {
    c.listeners.delete(onLine)
    extra.signal.removeEventListener('abort', cancel)
  }
  return progress.finish()
}

const runCommand = {
  name: 'run_command',
  title: 'Run a command in the session',
  annotations: ({ egress }) => ({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: egress !== 'none' }),
  description: `Runs a shell command (bash, else sh) in the session's container, in its workspace folder or cwd, stdin closed. Waits for it at most waitMs (default 45 s), streaming output as progress notifications, and returns its exit code and last output lines (up to 64 KiB; the log file has all); a command still running then goes on in the background and the result has its commandId (background: true returns at once): command_output reads it and waits for its end, command_kill stops it. timeoutMs (default 10 min, up to 24 h) kills the command's whole process tree, as does cancelling the request while it waits. Network access goes through the session's egress policy. ${INSIDE}`,
  schema: strict({
    session,
    command: z.string().min(1).describe('The shell command, as typed in a terminal'),
    cwd: z.string().min(1).optional().describe("The folder to run in, relative to the session's workspace folder (default: the workspace folder)"),
    timeoutMs: z.number().int().min(1).max(MAX_TIMEOUT_MS).optional().describe('Milliseconds before the command is killed, waited for or not (default 600000)'),
    waitMs: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe('Milliseconds to wait for the command before returning with it still running (default 45000)'),
    background: z.boolean().optional().describe('Return at once with the commandId, the command running on (default false)'),
    tty: z.boolean().optional().describe("Run it in a terminal (for prompts and interactive programs): output is then the terminal's screen, returned once it has been still for a moment or within waitMs, and command_input types keys into it (default false)"),
    cols: z.number().int().min(20).max(500).optional().describe("The terminal's columns, with tty (default 120)"),
    rows: z.number().int().min(5).max(200).optional().describe("The terminal's rows, with tty (default 40)"),
  }),
  output: commandResult,
  async run(args, { sessions, commands, extra }) {
    const s = await sessions.get(args.session)
    const cwd = resolveIn(s.root, args.cwd)
    const shell = await s.acquireShell()
    const timeoutMs = args.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const waitMs = args.background ? 0 : (args.waitMs ?? DEFAULT_WAIT_MS)
    if (args.tty) {
      const c = new TtyCommand({ session: s.id, command: args.command, cwd: shown(s.root, cwd), timeoutMs, cols: args.cols ?? 120, rows: args.rows ?? 40 })
      commands.add(c)
      c.run(shell, cwd, (used) => s.release(used))
      await settled(c, waitMs, extra)
      return resultOf(c, c.read())
    }
    if (args.cols !== undefined || args.rows !== undefined) throw new ToolError('INVALID_ARGUMENT', 'cols and rows size a terminal: give them with tty: true')
    const c = new Command({ session: s.id, command: args.command, cwd: shown(s.root, cwd), timeoutMs })
    commands.add(c)
    const argv = cwd === s.root ? args.command : ['sh', '-c', IN_FOLDER, 'sh', cwd, args.command]
    c.run(shell, argv, `mcp-${process.pid}-${++requests}`, (used) => s.release(used))
    const notifications = await follow(c, waitMs, extra)
    const view = c.running ? c.read(0, MAX_RESULT_LINES, MAX_RESULT_BYTES) : c.tail(MAX_RESULT_LINES, MAX_RESULT_BYTES)
    c.readTo = view.nextOffset
    return resultOf(c, view, { progressNotifications: notifications })
  },
}

/** Waits for a terminal command's screen to settle within `waitMs`; a cancelled request kills it. */
async function settled(c, waitMs, extra) {
  const cancel = () => c.kill()
  extra.signal.addEventListener('abort', cancel, { once: true })
  try {
    await c.settle(waitMs, QUIET_MS, extra.signal)
    if (extra.signal.aborted) await c.wait(KILL_WAIT_MS)
  } finally {
    extra.signal.removeEventListener('abort', cancel)
  }
}

const commandId = z.string().min(1).max(64).describe('The commandId run_command returned')

const commandOutput = {
  name: 'command_output',
  title: "Read a command's output",
  annotations: () => ({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }),
  description: `A command's output lines from offset (default: where the last read ended) and its state; with waitMs, first waits that long at most for it to end (output streams as progress notifications meanwhile). Lines are numbered from 0; up to 2000 lines or 64 KiB per call, nextOffset says where to go on. ${INSIDE}`,
  schema: strict({
    session,
    commandId,
    offset: z.number().int().min(0).optional().describe('The first line to return (default: where the last run_command or command_output of it ended)'),
    waitMs: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe('Wait at most this long for the command to end before answering (default 0)'),
  }),
  output: commandResult,
  async run(args, { commands, extra }) {
    const c = commands.get(args.commandId, args.session)
    if (c.tty) {
      await settled(c, args.waitMs ?? 0, extra)
      return resultOf(c, c.read())
    }
    const notifications = args.waitMs ? await follow(c, args.waitMs, extra) : 0
    const view = c.read(args.offset ?? c.readTo ?? 0, MAX_RESULT_LINES, MAX_RESULT_BYTES)
    c.readTo = view.nextOffset
    return resultOf(c, view, { progressNotifications: notifications })
  },
}

const commandKill = {
  name: 'command_kill',
  title: 'Stop a command',
  annotations: () => ({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }),
  description: `Stops a running command: its whole process tree in the container is killed; returns its final state and last lines. A command that has already ended is left as it is. ${INSIDE}`,
  schema: strict({ session, commandId }),
  output: commandResult,
  async run(args, { commands }) {
    const c = commands.get(args.commandId, args.session)
    c.kill()
    await c.wait(KILL_WAIT_MS)
    return resultOf(c, c.tail(MAX_RESULT_LINES, MAX_RESULT_BYTES))
  },
}

const commandInput = {
  name: 'command_input',
  title: 'Type keys into a terminal command',
  annotations: () => ({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false }),
  description: `Types keys into a command run with tty: true, as a person at its terminal would: text as it is, \\r for Enter, \\u0003 for Ctrl-C, \\u0004 for Ctrl-D, \\u001b for Escape, \\u001b[A for the up arrow. Then waits (at most waitMs, default 5 s) for the screen to settle and returns it. ${INSIDE}`,
  schema: strict({
    session,
    commandId,
    keys: z.string().min(1).max(65_536).describe('The keys, as typed'),
    waitMs: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe('Wait at most this long for the screen to settle after the keys (default 5000)'),
  }),
  output: commandResult,
  async run(args, { commands, extra }) {
    const c = commands.get(args.commandId, args.session)
    if (!c.tty) throw new ToolError('INVALID_ARGUMENT', `command ${c.id} runs without a terminal (its stdin is closed): run it with tty: true to type into it`)
    await c.input(args.keys)
    await settled(c, args.waitMs ?? DEFAULT_INPUT_WAIT_MS, extra)
    return resultOf(c, c.read())
  },
}

module.exports = { commandTools: [runCommand, commandOutput, commandKill, commandInput] }
