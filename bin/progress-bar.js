// A session's creation progress on stderr: on a terminal one line redrawn in place (phase,
// a bar and bytes for pulls, the detail); otherwise plain lines, a stream's at most one a
// second plus its last.
'use strict'

function formatBytes(n) {
  if (n < 1024) return `${n} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let value = n / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}

/** `45% 12.3 MB/27.1 MB` for an event with bytes, '' without. */
function amount(e) {
  if (!e.total) return e.current ? formatBytes(e.current) : ''
  const percent = Math.min(100, Math.floor((100 * e.current) / e.total))
  return `${percent}% ${formatBytes(e.current)}/${formatBytes(e.total)}`
}

function bar(e, width) {
  if (!e.total) return ''
  const filled = Math.min(width, Math.round((width * e.current) / e.total))
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`
}

const STREAMS = new Set(['pull', 'build', 'features'])

/** The reporter's `onProgress` for `create`, and `finish()` to clear its line. */
function progressReporter(stream = process.stderr) {
  const tty = Boolean(stream.isTTY)
  const lastPlain = new Map()
  let drawn = false
  let finished = false

  function draw(e) {
    const width = Math.max(40, (stream.columns || 80) - 1)
    const parts = [e.phase.padEnd(9), bar(e, 20), amount(e), e.detail].filter(Boolean)
    let text = parts.join(' ')
    if (text.length > width) text = `${text.slice(0, width - 1)}…`
    stream.write(`\r\x1b[K${text}`)
    drawn = true
  }

  function plain(e) {
    const now = Date.now()
    const last = e.total !== undefined && e.current === e.total
    if (STREAMS.has(e.phase) && !last && now - (lastPlain.get(e.phase) ?? 0) < 1000) return
    lastPlain.set(e.phase, now)
    const shown = amount(e)
    stream.write(`[${e.phase}] ${e.detail}${shown ? ` ${shown}` : ''}\n`)
  }

  return {
    onProgress(e) {
      if (finished) return
      if (tty) draw(e)
      else plain(e)
    },
    finish() {
      finished = true
      if (drawn) stream.write('\r\x1b[K')
    },
  }
}

module.exports = { progressReporter, formatBytes }
