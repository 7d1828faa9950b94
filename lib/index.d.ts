// Types of the package's entry point: the generated binding's, with `execStream` added to
// `DockerRuntime` (its handle carries Node streams, which napi cannot declare).
import type { Readable, Writable } from 'node:stream'

export * from '../index'

/** A running command of `DockerRuntime.execStream`: Lace's `ExecStreamHandle`. */
export interface ExecStreamHandle {
  /** The command's stdin; `end()` closes it. */
  stdin: Writable
  /** The command's stdout, ending when the command has ended. */
  stdout: Readable
  /** The command's stderr, ending when the command has ended. */
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
  KubernetesFileIO,
  PodEnvironmentConfig,
  PodEnvironmentOptions,
} from '../index'

/** What a container environment offers, in Magenta's `ToolCapability` names. */
export type DockerCapability = 'file-io' | 'shell' | 'threads'

/** A position in a file, as the Language Server Protocol counts it. */
export interface LspPosition {
  /** Zero-based line. */
  line: number
  /** Zero-based offset in the line, in UTF-16 code units. */
  character: number
}

/** Magenta's `LspClient` where no language server runs: every request resolves `[]`. */
export declare class NoopLspClient {
  /** Resolves `[]`: no hover information. */
  requestHover(filePath: string, position: LspPosition): Promise<[]>
  /** Resolves `[]`: no references. */
  requestReferences(filePath: string, position: LspPosition): Promise<[]>
  /** Resolves `[]`: no definition. */
  requestDefinition(filePath: string, position: LspPosition): Promise<[]>
  /** Resolves `[]`: no type definition. */
  requestTypeDefinition(filePath: string, position: LspPosition): Promise<[]>
}

/** Older Magenta's `DiagnosticsProvider`: resolves a sentence saying there are none. */
export declare class NoopDiagnosticsProvider {
  /** Resolves a sentence saying there are no diagnostics. */
  getDiagnostics(): Promise<string>
}

/**
 * What Magenta's `Environment` is on any container or Pod: a plain object with writable
 * properties. `Cwd` and `Home` let a host type `cwd` and `homeDir` as its own branded
 * strings (Magenta's `NvimCwd`, `HomeDir`).
 */
export interface ContainerEnvironmentBase<Cwd extends string = string, Home extends string = string> {
  /** Commands in the container, in `cwd`. */
  shell: DockerShell
  /** No language server runs in the container: every request resolves `[]`. */
  lspClient: NoopLspClient
  /** Reports that there are no diagnostics. */
  diagnosticsProvider: NoopDiagnosticsProvider
  /** No sandbox of Magenta's own: the container is the sandbox. */
  sandboxViolationHandler: undefined
  /** Absolute container path: the option's, else the container's working directory. */
  cwd: Cwd
  /** The user's home directory, from the container's `/etc/passwd`. */
  homeDir: Home
  /** `file-io`, `shell` and `threads`. */
  availableCapabilities: Set<DockerCapability>
}

/** Magenta's `Environment` in a container of an engine (`createDockerEnvironment`). */
export interface DockerEnvironment<Cwd extends string = string, Home extends string = string>
  extends ContainerEnvironmentBase<Cwd, Home> {
  /** Files of the container, relative paths against `cwd`. */
  fileIO: DockerFileIO
  /** Git state of the repository `cwd` is in. */
  gitClient: ContainerGitClient
  /** `{ type: 'docker', container, cwd }`. */
  environmentConfig: EnvironmentConfig
}

/**
 * The FileIO, Shell, git client, cwd and home directory a host needs to run an agent
 * thread inside `opts.container`, shaped as Magenta's `Environment`.
 */
export declare function createDockerEnvironment<Cwd extends string = string, Home extends string = string>(
  opts: DockerEnvironmentOptions,
): Promise<DockerEnvironment<Cwd, Home>>

/**
 * Magenta's `Environment` on a session Pod (`KubernetesRuntime.environment`), its files and
 * commands through the Pod's session agent; no git client.
 */
export interface KubernetesEnvironment<Cwd extends string = string, Home extends string = string>
  extends ContainerEnvironmentBase<Cwd, Home> {
  /** Files of the Pod, relative paths against `cwd`. */
  fileIO: KubernetesFileIO
  /** `{ type: 'kubernetes', pod, cwd }`. */
  environmentConfig: PodEnvironmentConfig
}

// Inside the augmentation, `KubernetesEnvironment` would name the generated (native) one.
type PodMagentaEnvironment<Cwd extends string, Home extends string> = KubernetesEnvironment<Cwd, Home>

declare module '../index' {
  interface KubernetesRuntime {
    /**
     * The FileIO, Shell, cwd and home directory a host needs to run an agent thread in the
     * Pod, shaped as Magenta's `Environment`, all through the Pod's session agent (started
     * here); `UNSUPPORTED`, with the reason, where the agent cannot serve.
     */
    environment<Cwd extends string = string, Home extends string = string>(
      containerId: string,
      opts: PodEnvironmentOptions,
    ): Promise<PodMagentaEnvironment<Cwd, Home>>
  }
}
