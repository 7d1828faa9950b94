// A host's egress callbacks as the native relay calls them: `onRequest` always answers a
// boolean (a throw or a rejection is a no, never an uncaught exception in the host), and
// `onEvent` never throws into the host. Applied by `safe-callbacks.js` to every option that
// takes an egress.
'use strict'

function safeEgress(egress) {
  if (egress === null || typeof egress !== 'object') return egress
  const { onRequest, onEvent } = egress
  const safe = { ...egress }
  if (typeof onRequest === 'function') {
    safe.onRequest = (request) => {
      try {
        return Promise.resolve(onRequest(request)).then((answer) => answer === true, () => false)
      } catch {
        return false
      }
    }
  }
  if (typeof onEvent === 'function') {
    safe.onEvent = (event) => {
      try {
        onEvent(event)
      } catch {}
    }
  }
  return safe
}

const withSafeEgress = (opts) => (opts && opts.egress !== undefined ? { ...opts, egress: safeEgress(opts.egress) } : opts)

module.exports = { safeEgress, withSafeEgress }
