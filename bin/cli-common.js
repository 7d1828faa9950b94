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

module.exports = { UsageError, table, age, withProgress }
