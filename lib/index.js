// The package's entry point: everything the native binding exports, plus what napi cannot
// express in JavaScript types — `DockerRuntime.prototype.execStream`, whose handle carries
// Node streams. Kept thin: the work happens in the native `execStreamNative`.
'use strict'

const { Readable, Writable } = require('node:stream')
const native = require('../index.js')

/** Wraps a started native stream in Node streams. */
function streamHandle(nativeStream, stdout, stderr) {
  const stdin = new Writable({
    write(chunk, _encoding, callback) {
      nativeStream.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)).then(() => callback(), callback)
    },
    final(callback) {
      nativeStream.end().then(() => callback(), callback)
    },
    destroy(err, callback) {
      nativeStream.end().then(() => callback(err), () => callback(err))
    },
  })
  const ended = nativeStream.wait().then(
    (exit) => {
      stdout.push(null)
      stderr.push(null)
      return exit
    },
    (err) => {
      stdout.destroy(err)
      stderr.destroy(err)
      throw err
    },
  )
  // `wait()` may never be called; its rejection is reported there, not as unhandled.
  ended.catch(() => {})
  return {
    stdin,
    stdout,
    stderr,
    wait: () => ended,
    kill(signal) {
      nativeStream.kill(signal).catch(() => {})
    },
  }
}

native.DockerRuntime.prototype.execStream = async function execStream(containerId, options) {
  const stdout = new Readable({ read() {} })
  const stderr = new Readable({ read() {} })
  const nativeStream = await this.execStreamNative(
    containerId,
    options,
    (chunk) => stdout.push(chunk),
    (chunk) => stderr.push(chunk),
  )
  return streamHandle(nativeStream, stdout, stderr)
}

require('./environment.js')(native)
require('./safe-callbacks.js')(native)
require('./option-keys.js')(native)

// Spelled so that Node's ESM loader finds every name (`import { Workspaces } from
// 'container-isolation'`): a re-export of the generated binding, which is `native` itself,
// plus the two classes `environment.js` adds to it.
module.exports = require('../index.js')
module.exports.NoopLspClient = native.NoopLspClient
module.exports.NoopDiagnosticsProvider = native.NoopDiagnosticsProvider
