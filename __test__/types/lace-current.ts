// Lace's ContainerRuntime as it stands since June 2026 (packages/agent/src/containers/
// types.ts), re-typed from its public source. Lace compiles without
// exactOptionalPropertyTypes and passes `undefined` for absent options, so its optional
// members are written `?: T | undefined`. `tsc` proves that DockerRuntime, with the
// package's execStream, satisfies it under strict and exactOptionalPropertyTypes.
import type { Readable, Writable } from 'node:stream'
import { DockerRuntime } from '../../lib/index'

interface PortMapping { host: number; container: number }
interface ContainerMount { source: string; target: string; readonly?: boolean | undefined }
interface ContainerConfig {
  id?: string | undefined
  name?: string | undefined
  image: string
  workingDirectory: string
  mounts: ContainerMount[]
  command?: string[] | undefined
  environment?: Record<string, string> | undefined
  ports?: PortMapping[] | undefined
  restartPolicy?: 'unless-stopped' | undefined
  sysctls?: Record<string, string> | undefined
  capAdd?: string[] | undefined
  network?: string | undefined
  labels?: Record<string, string> | undefined
}
type ContainerState = 'created' | 'running' | 'stopped' | 'failed'
interface ContainerInfo {
  id: string
  state: ContainerState
  mounts?: ContainerMount[] | undefined
  pid?: number | undefined
  startedAt?: Date | undefined
  stoppedAt?: Date | undefined
  exitCode?: number | undefined
  labels?: Record<string, string> | undefined
}
type ExecEnvironmentMode = 'inherit' | 'replace'
interface ExecOptions {
  command: string[]
  workingDirectory?: string | undefined
  environment?: Record<string, string> | undefined
  environmentMode?: ExecEnvironmentMode | undefined
  stdin?: string | undefined
  timeout?: number | undefined
}
interface ExecResult { stdout: string; stderr: string; exitCode: number }
interface ExecStreamOptions {
  command: string[]
  workingDirectory?: string | undefined
  environment?: Record<string, string> | undefined
  environmentMode?: ExecEnvironmentMode | undefined
  longLived?: boolean | undefined
}
interface ExecStreamHandle {
  stdin: Writable
  stdout: Readable
  stderr: Readable
  wait(): Promise<{ exitCode: number }>
  kill(signal?: NodeJS.Signals): void
}
interface ContainerRuntime {
  create(config: ContainerConfig): string | Promise<string>
  start(containerId: string): Promise<void>
  stop(containerId: string, timeout?: number): Promise<void>
  remove(containerId: string): Promise<void>
  exec(containerId: string, options: ExecOptions): Promise<ExecResult>
  execStream(containerId: string, options: ExecStreamOptions): Promise<ExecStreamHandle>
  inspect(containerId: string): ContainerInfo | Promise<ContainerInfo>
  list(): ContainerInfo[] | Promise<ContainerInfo[]>
  daemonInspect(containerId: string): Promise<ContainerInfo | null>
  adopt(config: ContainerConfig, state: ContainerState): Promise<void>
  releasePerInvocation?(parentSession: string, childSession: string): Promise<void>
}

export const laceCurrentRuntime: ContainerRuntime = new DockerRuntime()

// Lace builds configs from specs whose optional fields may be undefined.
declare const spec: { env?: Record<string, string>; ports?: PortMapping[]; network?: string }
export const laceConfig: ContainerConfig = {
  image: 'img',
  workingDirectory: '/workspace',
  mounts: [{ source: '/h', target: '/workspace', readonly: undefined }],
  environment: spec.env,
  ports: spec.ports,
  network: spec.network,
}
export const created: Promise<string> = new DockerRuntime().create(laceConfig)
