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
