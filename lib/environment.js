// Magenta's `Environment` from the native `createDockerEnvironment` and
// `KubernetesRuntime.prototype.environmentNative`: a plain object with
// writable properties (Magenta reassigns some), capabilities as a `Set`, and the no-op LSP
// client and diagnostics provider a container environment offers.
'use strict'

const CAPABILITIES = ['file-io', 'shell', 'threads']
const NO_DIAGNOSTICS = 'Diagnostics are not available in Docker environment'

/** Magenta's `LspClient` where no language server runs: every request finds nothing. */
class NoopLspClient {
  requestHover() {
    return Promise.resolve([])
  }

  requestReferences() {
    return Promise.resolve([])
  }

  requestDefinition() {
    return Promise.resolve([])
  }

  requestTypeDefinition() {
    return Promise.resolve([])
  }
}

/** Older Magenta's `DiagnosticsProvider`: says that there are none to give. */
class NoopDiagnosticsProvider {
  getDiagnostics() {
    return Promise.resolve(NO_DIAGNOSTICS)
  }
}

function magentaEnvironment(env) {
  return {
    ...env,
    availableCapabilities: new Set(CAPABILITIES),
    lspClient: new NoopLspClient(),
    diagnosticsProvider: new NoopDiagnosticsProvider(),
    sandboxViolationHandler: undefined,
  }
}

/** Replaces `native.createDockerEnvironment` with its Magenta-shaped wrapper and gives
 * `KubernetesRuntime` its `environment()`. */
module.exports = function installEnvironment(native) {
  const createNative = native.createDockerEnvironment
  native.createDockerEnvironment = async function createDockerEnvironment(opts) {
    return magentaEnvironment(await createNative(opts))
  }
  native.KubernetesRuntime.prototype.environment = async function environment(containerId, opts) {
    return magentaEnvironment(await this.environmentNative(containerId, opts))
  }
  native.NoopLspClient = NoopLspClient
  native.NoopDiagnosticsProvider = NoopDiagnosticsProvider
  return native
}
