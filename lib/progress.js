// A host's `onProgress` as the native side calls it: it never throws into the host (an
// exception of a progress display is dropped; the session's creation goes on). Applied by
// `safe-callbacks.js` to the constructor's option and to each `create`'s.
'use strict'

function safeProgress(opts) {
  if (!opts || typeof opts.onProgress !== 'function') return opts
  const { onProgress } = opts
  return {
    ...opts,
    onProgress: (event) => {
      try {
        onProgress(event)
      } catch {}
    },
  }
}

module.exports = { safeProgress }
