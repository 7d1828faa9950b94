// Lace's ContainerRuntime, declared exactly as docs/contract.md §2 gives it: `tsc --noEmit` proves
// that DockerRuntime from the generated index.d.ts satisfies it.
import { DockerRuntime } from '../../index'

interface ContainerMount { source: string; target: string; readonly?: boolean }
interface ContainerConfig {
  id?: string; name?: string
  workingDirectory: string; mounts: ContainerMount[]
  command?: string[]; environment?: Record<string, string>
  memory?: number; cpuShares?: number
}
type ContainerState = 'created' | 'running' | 'stopped' | 'failed'
interface ContainerInfo {
  id: string; state: ContainerState; pid?: number
  startedAt?: Date; stoppedAt?: Date; exitCode?: number
}
interface ExecOptions {
  command: string[]; workingDirectory?: string
  environment?: Record<string, string>; stdin?: string; timeout?: number
}
interface ExecResult { stdout: string; stderr: string; exitCode: number }

interface ContainerRuntime {
  create(config: ContainerConfig): string | Promise<string>;
  start(containerId: string): Promise<void>;
  stop(containerId: string, timeout?: number): Promise<void>;
  remove(containerId: string): Promise<void>;
  exec(containerId: string, options: ExecOptions): Promise<ExecResult>;
  inspect(containerId: string): ContainerInfo | Promise<ContainerInfo>;
  list(): ContainerInfo[] | Promise<ContainerInfo[]>;
  translateToContainer(hostPath: string, containerId: string): string;
  translateToHost(containerPath: string, containerId: string): string;
}

export const laceRuntime: ContainerRuntime = new DockerRuntime()

// Lace's primary runtime on macOS satisfies the same interface.
import { AppleContainerRuntime } from '../../index'
export const laceAppleRuntime: ContainerRuntime = new AppleContainerRuntime()
