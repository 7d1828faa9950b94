// A git project for the cluster suites: the given files, one commit on `main`.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()

export function project(files: Record<string, string> = { 'README.md': '# project\n' }, prefix = 'kube-project-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  git(dir, 'init', '-q', '-b', 'main')
  git(dir, 'add', '.')
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'first')
  return dir
}
