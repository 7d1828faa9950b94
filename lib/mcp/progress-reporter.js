// Progress notifications for a call that waits on a command, when the request carries a
// progressToken: output lines batched (at most every 100 ms, up to 16 KiB each), and a
// heartbeat every 10 s while nothing is printed, so clients that extend their own timeout
// on progress (the TypeScript SDK's resetTimeoutOnProgress, the Python SDK's progress
// callback) keep waiting. `progress` is the milliseconds waited so far (it rises with
// every notification, as MCP requires), `total` the most this call waits.
// The SDK's client drops (and reports as an error) a notification read in the same chunk
// as the response after it (typescript-sdk#2580), so none is sent as the wait ends: lines
// still pending then reach the client in the result only, and the result waits until the
// last notification is QUIET_MS old.
'use strict'

const PROGRESS_EVERY_MS = 100
const PROGRESS_MAX_BYTES = 16 * 1024
const HEARTBEAT_MS = 10_000
const QUIET_MS = 50

/**
 * @param {{ sendNotification: (n: object) => Promise<void> }} extra the request's
 * @param {string | number | undefined} token
 * @param {number} totalMs
 */
function progressReporter(extra, token, totalMs) {
  const started = Date.now()
  let pending = []
  let pendingBytes = 0
  let dropped = 0
  let sent = 0
  let lastProgress = 0
  let lastAt = 0
  let last = Promise.resolve()
  let timer
  let heartbeat
  const send = (message) => {
    lastProgress = Math.max(lastProgress + 1, Date.now() - started)
    sent++
    lastAt = Date.now()
    last = extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: lastProgress, total: totalMs, message } }).catch(() => {})
    beat()
  }
  const flush = () => {
    timer = undefined
    const message = pending.join('\n') + (dropped ? `\n… ${dropped} more line${dropped === 1 ? '' : 's'}` : '')
    pending = []
    pendingBytes = 0
    dropped = 0
    send(message)
  }
  const beat = () => {
    clearTimeout(heartbeat)
    heartbeat = setTimeout(() => send(`still running after ${Math.round((Date.now() - started) / 1000)} s`), HEARTBEAT_MS)
  }
  if (token !== undefined) beat()
  return {
    line(text) {
      if (token === undefined) return
      if (pendingBytes + text.length < PROGRESS_MAX_BYTES) {
        pending.push(text)
        pendingBytes += text.length + 1
      } else dropped++
      timer ??= setTimeout(flush, PROGRESS_EVERY_MS)
    },
    /** Stops sending; resolves (with the count sent) once the result may follow. */
    async finish() {
      clearTimeout(timer)
      clearTimeout(heartbeat)
      await last
      const wait = lastAt + QUIET_MS - Date.now()
      if (sent > 0 && wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      return sent
    },
  }
}

module.exports = { progressReporter }
