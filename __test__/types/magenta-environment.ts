// Magenta's Environment, re-typed as Magenta declares it: `tsc --noEmit` proves that the
// package's `createDockerEnvironment` gives one without a cast, branded strings included.
import { createDockerEnvironment } from '../../lib/index'

type NvimCwd = string & { __nvim_cwd: true }
type HomeDir = string & { __home_dir: true }
type NvimFilePath = string & { __nvim_file_path: true }
type ToolCapability = 'lsp' | 'shell' | 'threads' | 'file-io' | 'scripts' | 'nvim'
type Position = { line: number; character: number }
type OutputLine = { stream: 'stdout' | 'stderr'; text: string }

interface FileIO {
  readFile(path: string): Promise<string>
  readBinaryFile(path: string): Promise<Buffer>
  writeFile(path: string, content: string | Buffer): Promise<void>
  fileExists(path: string): Promise<boolean>
  mkdir(path: string): Promise<void>
  stat(path: string): Promise<{ mtimeMs: number; size: number } | undefined>
  readdir(path: string): Promise<string[]>
  isDirectory(path: string): Promise<boolean>
}
interface Shell {
  execute(command: string, opts: {
    toolRequestId: string
    onOutput?: (line: OutputLine) => void
    onStart?: () => void
  }): Promise<{
    exitCode: number; signal: NodeJS.Signals | undefined
    output: OutputLine[]; logFilePath: string | undefined; durationMs: number
  }>
  terminate(): void
}
type GitState = {
  repoRoot: string; branch: string | undefined; headSha: string; headSubject: string
  stagedCount: number; unstagedCount: number; untrackedCount: number
}
interface GitClient { getState(): Promise<GitState | undefined> }
type LspHoverResponse = { result: { contents: unknown } }[]
interface LspClient {
  requestHover(filePath: NvimFilePath, position: Position): Promise<LspHoverResponse>
  requestReferences(filePath: NvimFilePath, position: Position): Promise<unknown[]>
  requestDefinition(filePath: NvimFilePath, position: Position): Promise<unknown[]>
  requestTypeDefinition(filePath: NvimFilePath, position: Position): Promise<unknown[]>
}
interface SandboxViolationHandler { onViolation(detail: string): void }
interface LuaExecutor { execute(code: string): Promise<unknown> }
interface Environment {
  fileIO: FileIO
  shell: Shell
  gitClient: GitClient
  sandboxViolationHandler?: SandboxViolationHandler | undefined
  lspClient: LspClient
  luaExecutor?: LuaExecutor | undefined
  cwd: NvimCwd
  homeDir: HomeDir
  availableCapabilities: Set<ToolCapability>
  environmentConfig: { type: 'docker'; container: string; cwd: string }
}
/** Older Magenta's environment also carried this. */
interface DiagnosticsProvider { getDiagnostics(): Promise<string> }

export async function magentaEnvironment(): Promise<Environment & { diagnosticsProvider: DiagnosticsProvider }> {
  const environment = await createDockerEnvironment<NvimCwd, HomeDir>({ container: 'c', threadId: 't' })
  const magenta: Environment = environment
  magenta.fileIO = environment.fileIO
  return environment
}
