// `container-isolation mcp`: an MCP server over stdio whose tools act in isolated
// sessions. It serves until the client closes stdin, then closes its sessions — without
// --keep their containers are removed and clones moved to trash (the library's exit hooks
// and watchdog do the same if the server is killed) — and exits.
'use strict'

const { existsSync, statSync } = require('node:fs')
const { join } = require('node:path')
const { DockerRuntime, KubernetesRuntime, Workspaces } = require('../index.js')
const { parseMcpArgs, McpUsageError, USAGE } = require('./args.js')
const { createServer } = require('./server.js')
const { Sessions } = require('./sessions.js')
const { AskUser } = require('./ask-user.js')
const { ExportPolicy } = require('./export-policy.js')
const { LineTransport } = require('./stdio-transport.js')
const { SessionLogs } = require('./session-logs.js')
const { KeptSessions } = require('./kept-sessions.js')
const { Commands } = require('./command.js')

/** After the sessions are closed the process exits by itself; this only reports a leak. */
const EXIT_GRACE_MS = 5000

const log = (line) => process.stderr.write(`container-isolation mcp: ${line}\n`)

/**
 * Runs the server until stdin closes.
 * @param {string[]} argv the arguments after `mcp`
 * @returns {Promise<number>} the exit code
 */
async function main(argv) {
  let opts
  try {
    opts = parseMcpArgs(argv)
  } catch (err) {
    if (!(err instanceof McpUsageError)) throw err
    process.stderr.write(`${err.message}\n\n${USAGE}\n`)
    return 2
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (!existsSync(opts.projectDir) || !statSync(opts.projectDir).isDirectory()) {
    process.stderr.write(`container-isolation mcp: --project ${opts.projectDir} is not a directory\n`)
    return 1
  }
  // `process` sessions: exit hooks remove them on a normal end, SIGINT and SIGTERM; the
  // watchdog on SIGKILL. Kept sessions outlive the server by design.
  // With --pool, containers for the latest session's settings are made ahead (removed at
  // exit like `process` sessions): a session_open after the first claims one.
  // On a cluster, a `process` session's Pod goes with its host Lease instead of a watchdog.
  const pool = opts.pool ? { pool: { size: opts.pool } } : {}
  const workspaces = opts.kubernetes
    ? new Workspaces({ baseDir: opts.baseDir, engine: { kubernetes: opts.kubernetes }, ...pool })
    : new Workspaces({ baseDir: opts.baseDir, watchdog: !opts.keep, ...pool })
  const runtime = opts.kubernetes
    ? new KubernetesRuntime({ kubernetes: opts.kubernetes, baseDir: join(opts.baseDir, 'kubernetes') })
    : new DockerRuntime({ baseDir: opts.baseDir })
  const { server, provide } = createServer({ exportPrefix: opts.exportPrefix, autoSession: opts.autoSession, cluster: Boolean(opts.kubernetes) })
  const ask = new AskUser(server)
  const exportPolicy = new ExportPolicy({ prefix: opts.exportPrefix, allowForce: opts.allowForceExport, ask })
  const commands = new Commands()
  const sessions = new Sessions({
    ...opts,
    workspaces,
    ask,
    commands,
    logs: new SessionLogs(opts.baseDir),
    kept: new KeptSessions(opts.baseDir),
  })
  provide({ sessions, workspaces, runtime, exportPolicy, commands, keep: opts.keep, egress: opts.egress })
  server.onerror = (err) => log(`protocol error: ${err.message}`)

  const transport = new LineTransport(process.stdin, process.stdout)
  await server.connect(transport)
  log(`serving ${opts.projectDir} (sessions ${opts.keep ? 'kept' : 'removed'} when the client disconnects; exports under ${opts.exportPrefix}${opts.allowForceExport ? ', force allowed' : ''})`)

  return new Promise((resolve) => {
    let ending = false
    const end = async (why) => {
      if (ending) return
      ending = true
      const started = Date.now()
      const count = sessions.list().length
      log(`${why}: closing ${count} session(s)`)
      for (const err of await sessions.closeAll()) log(`closing a session failed: ${err.code ?? ''} ${err.message}`)
      await server.close().catch(() => {})
      log(`closed ${count} session(s) in ${Date.now() - started} ms; exiting`)
      process.stdin.destroy()
      setTimeout(() => log('still running after the sessions closed: something holds the event loop'), EXIT_GRACE_MS).unref()
      resolve(0)
    }
    process.stdin.once('end', () => end('the client closed stdin'))
    process.stdin.once('close', () => end('stdin closed'))
    process.stdout.on('error', () => end('stdout is gone'))
  })
}

module.exports = { main }
