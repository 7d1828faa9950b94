// Types of the package's entry point: the generated binding's, with `execStream` added to
// `DockerRuntime` (its handle carries Node streams, which napi cannot declare).
import type { Readable, Writable } from 'node:stream'

export * from '../index'

/** A running command of `DockerRuntime.execStream`: Lace's `ExecStreamHandle`. */
export interface ExecStreamHandle {
  /** The command's stdin; `end()` closes it. */
  stdin: Writable
  stdout: Readable
  stderr: Readable
  /** Resolves once the command has ended and its output has been delivered. */
  wait(): Promise<{ exitCode: number; signal?: NodeJS.Signals }>
  /** Signals every process the command started (default SIGTERM; SIGKILL kills them all). */
  kill(signal?: NodeJS.Signals): void
}

declare module '../index' {
  interface DockerRuntime {
    /**
     * Starts a long-lived command with stdin open (Lace's `execStream`). Through the
     * container's session agent where it runs: `kill` reaches every process the command
     * started, and `environmentMode: 'replace'` gives it only `environment`.
     */
    execStream(containerId: string, options: ExecStreamOptions): Promise<ExecStreamHandle>
  }
}

// Magenta's `Environment`, as `lib/environment.js` makes it from the native
// `createDockerEnvironment`. These declarations replace the generated ones of the same name.
import type {
  ContainerGitClient,
  DockerEnvironmentOptions,
  DockerFileIO,
  DockerShell,
  EnvironmentConfig,
} from '../index'

/** What a container environment offers, in Magenta's `ToolCapability` names. */
export type DockerCapability = 'file-io' | 'shell' | 'threads'

export interface LspPosition {
  line: number
  character: number
}

/** Magenta's `LspClient` where no language server runs: every request resolves `[]`. */
export declare class NoopLspClient {
  requestHover(filePath: string, position: LspPosition): Promise<[]>
  requestReferences(filePath: string, position: LspPosition): Promise<[]>
  requestDefinition(filePath: string, position: LspPosition): Promise<[]>
  requestTypeDefinition(filePath: string, position: LspPosition): Promise<[]>
}

/** Older Magenta's `DiagnosticsProvider`: resolves a sentence saying there are none. */
export declare class NoopDiagnosticsProvider {
  getDiagnostics(): Promise<string>
}

/**
 * A plain object with writable properties. `Cwd` and `Home` let a host type `cwd` and
 * `homeDir` as its own branded strings (Magenta's `NvimCwd`, `HomeDir`).
 */
export interface DockerEnvironment<Cwd extends string = string, Home extends string = string> {
  fileIO: DockerFileIO
  shell: DockerShell
  gitClient: ContainerGitClient
  lspClient: NoopLspClient
  diagnosticsProvider: NoopDiagnosticsProvider
  sandboxViolationHandler: undefined
  cwd: Cwd
  homeDir: Home
  availableCapabilities: Set<DockerCapability>
  environmentConfig: EnvironmentConfig
}

/**
 * The FileIO, Shell, git client, cwd and home directory a host needs to run an agent
 * thread inside `opts.container`, shaped as Magenta's `Environment`.
 */
export declare function createDockerEnvironment<Cwd extends string = string, Home extends string = string>(
  opts: DockerEnvironmentOptions,
): Promise<DockerEnvironment<Cwd, Home>>
