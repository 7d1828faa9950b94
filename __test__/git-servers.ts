// Real git servers for the delivery suites, on 127.0.0.1 only: `git http-backend` behind an
// HTTPS server with basic auth (a self-signed certificate made with the openssl CLI), and
// sshd with a generated key. Each is stopped by `stop()`.
import { ChildProcess, execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { git, tempDir } from './helpers'

const FIXTURES = join(__dirname, 'fixtures')

export interface HttpsGitServer {
  url(repo: string): string
  ca: string
  requestsLog: string
  root: string
  stop(): Promise<void>
}

/** A bare repository `name` under `root` with a first commit on `main`. */
export function bareRepository(root: string, name: string): string {
  const path = join(root, name)
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', path])
  return path
}

export async function startHttpsGitServer(user: string, password: string): Promise<HttpsGitServer> {
  const dir = tempDir('git-https')
  const [cert, key] = [join(dir.path, 'cert.pem'), join(dir.path, 'key.pem')]
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-addext', 'basicConstraints=critical,CA:FALSE', '-addext', 'extendedKeyUsage=serverAuth', '-keyout', key, '-out', cert], { stdio: 'ignore' })
  const root = join(dir.path, 'repos')
  execFileSync('mkdir', ['-p', root])
  const requestsLog = join(dir.path, 'requests.log')
  const child: ChildProcess = spawn(process.execPath, [join(FIXTURES, 'git-http-server.mjs'), '--root', root, '--tls', cert, key, '--requests-log', requestsLog], {
    env: { ...process.env, GIT_HTTP_SERVER_USER: user, GIT_HTTP_SERVER_PASSWORD: password },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`git-http-server exited ${code}`)))
  })
  const { port } = JSON.parse(first)
  return {
    url: (repo) => `https://127.0.0.1:${port}/${repo}`,
    ca: readFileSync(cert, 'utf8'),
    requestsLog,
    root,
    stop: async () => {
      child.kill()
      await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)))
      dir.cleanup()
    },
  }
}

export interface SshGitServer {
  url(repoPath: string): string
  keyFile: string
  knownHosts: string
  stop(): void
}

export function startSshGitServer(): SshGitServer {
  const dir = tempDir('git-sshd')
  const port = execFileSync('bash', [join(FIXTURES, 'git-sshd.sh'), 'start', dir.path], { encoding: 'utf8' }).trim()
  return {
    url: (repoPath) => `ssh://root@127.0.0.1:${port}${repoPath}`,
    keyFile: join(dir.path, 'client_key'),
    knownHosts: join(dir.path, 'known_hosts'),
    stop: () => {
      execFileSync('bash', [join(FIXTURES, 'git-sshd.sh'), 'stop', dir.path])
      dir.cleanup()
    },
  }
}

/** The commit `ref` names in the bare repository at `path`, or '' when none. */
export function remoteRef(path: string, ref: string): string {
  try {
    return git(path, 'rev-parse', '--verify', '-q', ref)
  } catch {
    return ''
  }
}
