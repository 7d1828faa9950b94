// Every host callback the native side calls, made safe before it gets there: the egress
// callbacks (`egress.js`) and `onProgress` (`progress.js`), on each option that takes them —
// the `Workspaces` constructor, `create`, `setEgress` and `DockerRuntime.create`.
'use strict'

const { safeEgress, withSafeEgress } = require('./egress.js')
const { safeProgress } = require('./progress.js')

const safeOptions = (opts) => safeProgress(withSafeEgress(opts))

module.exports = function installSafeCallbacks(native) {
  const Base = native.Workspaces
  const { create, setEgress } = Base.prototype
  Base.prototype.create = function (opts) {
    return create.call(this, safeOptions(opts))
  }
  Base.prototype.setEgress = function (sessionId, egress) {
    return setEgress.call(this, sessionId, safeEgress(egress))
  }
  const runtimeCreate = native.DockerRuntime.prototype.create
  native.DockerRuntime.prototype.create = function (config) {
    return runtimeCreate.call(this, withSafeEgress(config))
  }
  class Workspaces extends Base {
    constructor(opts) {
      super(safeOptions(opts))
    }
  }
  Object.defineProperty(Workspaces, 'name', { value: 'Workspaces' })
  native.Workspaces = Workspaces
}
