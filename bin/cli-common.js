// What the CLI's commands share: the usage error, table and age formatting, a progress line.
'use strict'

class UsageError extends Error {}

function table(rows, columns) {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)))
  const line = (cells) => cells.map((c, i) => String(c ?? '').padEnd(widths[i])).join('  ').trimEnd()
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => r[c])))].join('\n')
}

function age(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.round(s / 60)}m`
  if (s < 86400) return `${Math.round(s / 3600)}h`
  return `${Math.round(s / 86400)}d`
}

/** Prints a progress line on stderr when `promise` takes longer than a second. */
async function withProgress(label, promise) {
  const started = Date.now()
  const timer = setInterval(() => process.stderr.write(`${label}… ${Math.round((Date.now() - started) / 1000)}s\n`), 1000)
  try {
    return await promise
  } finally {
    clearInterval(timer)
  }
}

/** The global options that name the engine, as the docker CLI's -H/--context/--tls*. */
const ENGINE_FLAGS = ['--tls', '--tls-insecure-skip-verify']
const ENGINE_VALUED = ['--host', '--context', '--tls-ca', '--tls-cert', '--tls-key', '--ssh-key', '--ssh-known-hosts']

/** `EngineOptions` from those options, or `undefined` when none is given (auto-detection). */
function engineOptions(args) {
  const given = (name) => args[name] !== undefined
  if (![...ENGINE_FLAGS, ...ENGINE_VALUED].some((f) => given(f.slice(2)))) return undefined
  if (given('context') && given('host')) throw new UsageError('give --host or --context, not both')
  const engine = {}
  if (given('host')) engine.host = args.host
  if (given('context')) engine.context = args.context
  const tlsFiles = { ca: args['tls-ca'], cert: args['tls-cert'], key: args['tls-key'] }
  const anyTls = args.tls || args['tls-insecure-skip-verify'] || Object.values(tlsFiles).some((v) => v !== undefined)
  if (anyTls) {
    engine.tls = Object.fromEntries(Object.entries(tlsFiles).filter(([, v]) => v !== undefined))
    if (args['tls-insecure-skip-verify']) engine.tls.insecureSkipVerify = true
  }
  if (given('ssh-key') || given('ssh-known-hosts')) engine.ssh = { keyFile: args['ssh-key'], knownHostsFile: args['ssh-known-hosts'] }
  return engine
}

/** The session a command names first (a usage error without one). */
function session(args, command) {
  const [sessionId] = args._
  if (!sessionId) throw new UsageError(`${command} needs a session`)
  return sessionId
}

module.exports = { UsageError, table, age, session, withProgress, ENGINE_FLAGS, ENGINE_VALUED, engineOptions }
