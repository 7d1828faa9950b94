// Magenta's FileIO, declared exactly as docs/contract.md §3 gives it: `tsc --noEmit` proves that
// DockerFileIO from the generated index.d.ts satisfies it.
import { DockerFileIO } from '../../index'

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

export const magentaFileIO: FileIO = new DockerFileIO({ container: 'c' })
