// Magenta's Shell, declared exactly as docs/contract.md §4 gives it: `tsc --noEmit` proves that
// DockerShell from the generated index.d.ts satisfies it.
import { DockerShell } from '../../index'

type OutputLine = { stream: 'stdout' | 'stderr'; text: string }
type ShellResult = {
  exitCode: number; signal: NodeJS.Signals | undefined
  output: OutputLine[]; logFilePath: string | undefined; durationMs: number
}
interface Shell {
  execute(command: string, opts: {
    toolRequestId: string
    onOutput?: (line: OutputLine) => void
    onStart?: () => void
  }): Promise<ShellResult>
  terminate(): void
}

export const magentaShell: Shell = new DockerShell({ container: 'c', cwd: '/workspace', threadId: 't' })
