// Magenta's Environment (node/environment.ts and the capability interfaces of
// node/core/src/capabilities/, July 2026), re-typed from its public source. Magenta
// compiles with strict and exactOptionalPropertyTypes; `tsc -p __test__/types` proves that
// createDockerEnvironment's result is assignable to it, branded paths included, and that
// DockerFileIO and DockerShell are its FileIO and Shell.
import { createDockerEnvironment, DockerFileIO, DockerShell } from '../../lib/index'

type AbsFilePath = string & { __abs_file_path: true }
type HomeDir = AbsFilePath & { __home_dir: true }
type NvimCwd = AbsFilePath & { __nvim_cwd: true }
type ThreadId = string & { __threadId: true }

interface FileIO {
  readFile(path: string): Promise<string>
  readBinaryFile(path: string): Promise<Buffer>
  writeFile(path: string, content: string): Promise<void>
  fileExists(path: string): Promise<boolean>
  mkdir(path: string): Promise<void>
  stat(path: string): Promise<{ mtimeMs: number; size: number } | undefined>
  readdir(path: string): Promise<string[]>
  isDirectory(path: string): Promise<boolean>
}
type OutputLine = { stream: 'stdout' | 'stderr'; text: string }
type ShellResult = {
  exitCode: number
  signal: NodeJS.Signals | undefined
  output: OutputLine[]
  logFilePath: string | undefined
  durationMs: number
}
interface Shell {
  execute(
    command: string,
    opts: { toolRequestId: string; onOutput?: (line: OutputLine) => void; onStart?: () => void },
  ): Promise<ShellResult>
  terminate(): void
}
type LspRange = { start: { line: number; character: number }; end: { line: number; character: number } }
type LspHoverResponse = (null | { result: { range: LspRange; contents: { kind: string; value: string } } })[]
type LspReferencesResponse = (null | { result: { uri: string; range: LspRange }[] })[]
type LspDefinitionResponse = (null | { result: { uri: string; range: LspRange }[] })[]
type Position = { line: number; character: number }
interface LspClient {
  requestHover(filePath: AbsFilePath, position: Position): Promise<LspHoverResponse>
  requestReferences(filePath: AbsFilePath, position: Position): Promise<LspReferencesResponse>
  requestDefinition(filePath: AbsFilePath, position: Position): Promise<LspDefinitionResponse>
  requestTypeDefinition(filePath: AbsFilePath, position: Position): Promise<LspDefinitionResponse>
}
interface LuaExecutor {
  execLua(code: string): Promise<unknown>
}
type GitState = {
  repoRoot: string
  branch: string | undefined
  headSha: string
  headSubject: string
  stagedCount: number
  unstagedCount: number
  untrackedCount: number
}
interface GitClient {
  getState(): Promise<GitState | undefined>
}
type ToolCapability = 'lsp' | 'shell' | 'threads' | 'file-io' | 'scripts' | 'nvim'
type EnvironmentConfig = { type: 'local'; cwd?: NvimCwd } | { type: 'docker'; container: string; cwd: string }
declare class SandboxViolationHandler {
  private pending
}

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
  environmentConfig: EnvironmentConfig
}

export async function magentaEnvironment(threadId: ThreadId): Promise<Environment> {
  const environment: Environment = await createDockerEnvironment<NvimCwd, HomeDir>({ container: 'c', cwd: '/tmp', threadId })
  // Magenta reassigns these after creation.
  environment.fileIO = new DockerFileIO({ container: 'c' })
  environment.sandboxViolationHandler = undefined
  return environment
}

export const magentaShell: Shell = new DockerShell({ container: 'c', cwd: '/tmp', threadId: 't' as ThreadId })
