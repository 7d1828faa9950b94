// Paths a client gives, resolved against the session's workspace folder in the container
// (`/workspace` unless devcontainer.json says otherwise). A path that leaves it — through
// `..`, or absolute elsewhere — is `INVALID_ARGUMENT`. Symlinks are the container's own:
// FileIO resolves them inside the container, never on the host.
'use strict'

const path = require('node:path').posix
const { invalid } = require('./results.js')

/**
 * The absolute container path of `given` under `root`.
 * @param {string} root the workspace folder, absolute
 * @param {string | undefined} given relative to `root`, or absolute inside it; default `.`
 */
function resolveIn(root, given) {
  const p = given === undefined || given === '' ? '.' : given
  if (p.includes('\0')) throw invalid('a path may not contain NUL')
  const absolute = path.resolve(root, p)
  if (absolute !== root && !absolute.startsWith(root === '/' ? '/' : `${root}/`)) {
    throw invalid(`path '${p}' leaves the session's workspace ${root}: paths are relative to it, and tools reach nothing outside it`)
  }
  return absolute
}

/** `absolute` as the client sees it: relative to `root`, `.` for the root itself. */
function shown(root, absolute) {
  return path.relative(root, absolute) || '.'
}

module.exports = { resolveIn, shown }
