// A dockerd of the test's own, for suites that stop and restart the engine: its socket, data,
// exec root, pidfile, containerd and network namespace are private to a temp dir, so the
// machine's daemon (and its docker0, iptables and sysctls) is never touched.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import {
  closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmdirSync, writeFileSync,
} from 'node:fs'
import { request } from 'node:http'
import { basename, join } from 'node:path'

const DOCKERD = '/usr/sbin/dockerd'
const CLI = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker'
const MACHINE_HOST = 'unix:///var/run/docker.sock'
const READY_MS = 30_000
const STOP_MS = 30_000

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function pings(socketPath: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: timeoutMs }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(false))
    req.end()
  })
}

const OURS = /^(dockerd|containerd|containerd-shim[-\w]*)$/

/** Our dockerd, containerd and shims (their command line names `dir`), with all their descendants. */
function processesUnder(dir: string): number[] {
  const children = new Map<number, number[]>()
  const roots: number[] = []
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry)
    if (!Number.isInteger(pid)) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      children.set(ppid, [...(children.get(ppid) ?? []), pid])
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      if (OURS.test(basename(argv[0])) && argv.some((a) => a.includes(`${dir}/`))) roots.push(pid)
    } catch {
      // gone meanwhile
    }
  }
  const all = new Set<number>()
  const visit = (pid: number) => {
    all.add(pid)
    for (const child of children.get(pid) ?? []) if (!all.has(child)) visit(child)
  }
  roots.forEach(visit)
  return [...all]
}

/** Mount points at or under `dir`, deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((line) => (line.split(' ')[1] ?? '').replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))))
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length)
}

/** Removes the empty cgroups left when a container's processes were killed rather than stopped. */
function removeContainerCgroups(ids: string[]): void {
  const root = '/sys/fs/cgroup'
  for (const controller of ['', ...readdirSync(root)]) {
    for (const id of ids) {
      try {
        rmdirSync(join(root, controller, 'docker', id))
      } catch {
        // not there, or not empty
      }
    }
  }
}

export class PrivateDockerd {
  /** Short on purpose: unix socket paths (here and containerd's under exec/) max out at 107 bytes. */
  readonly dir = mkdtempSync('/tmp/cipd-')
  readonly socketPath = join(this.dir, 'docker.sock')
  readonly logPath = join(this.dir, 'dockerd.log')
  private child?: ChildProcess
  private exited?: Promise<void>

  /** Starts it (again: same data-root, so --live-restore keeps its containers) and waits for _ping. */
  async start(): Promise<void> {
    if (this.child) throw new Error(`private dockerd already running (pid ${this.child.pid})`)
    const ns = this.dir.split('/').pop()!
    writeFileSync(join(this.dir, 'daemon.json'), '{}\n')
    const log = openSync(this.logPath, 'a')
    // unshare --net execs dockerd in a network namespace of its own: with --bridge=none dockerd
    // deletes any interface named docker0 in its namespace, which must never be the machine's.
    const child = spawn('unshare', ['--net', '--', DOCKERD,
      '-H', `unix://${this.socketPath}`,
      '--data-root', join(this.dir, 'data'),
      '--exec-root', join(this.dir, 'exec'),
      '--pidfile', join(this.dir, 'docker.pid'),
      '--config-file', join(this.dir, 'daemon.json'),
      '--containerd-namespace', ns,
      '--containerd-plugins-namespace', `${ns}-plugins`,
      '--live-restore',
      '--bridge=none', '--iptables=false', '--ip6tables=false', '--ip-forward=false',
    ], { stdio: ['ignore', log, log] })
    closeSync(log)
    this.child = child
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    let exitedEarly = false
    void this.exited.then(() => {
      exitedEarly = true
      if (this.child === child) this.child = undefined
    })
    const deadline = Date.now() + READY_MS
    while (Date.now() < deadline && !exitedEarly) {
      if (await pings(this.socketPath, Math.max(deadline - Date.now(), 100))) return
      await sleep(100)
    }
    const why = exitedEarly ? 'exited' : `did not answer _ping within ${READY_MS / 1000} s`
    await this.stop()
    throw new Error(`private dockerd ${why} (${this.socketPath}); log tail:\n${this.logTail()}`)
  }

  /** SIGTERM to this daemon only, then waits until it is gone (SIGKILL after STOP_MS). */
  async stop(): Promise<void> {
    const child = this.child
    if (!child || !this.exited) return
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timedOut = await Promise.race([this.exited.then(() => false), sleep(STOP_MS).then(() => true)])
      if (timedOut) {
        child.kill('SIGKILL')
        await this.exited
      }
    }
    this.child = undefined
  }

  /** The docker CLI against this daemon. */
  cli(...args: string[]): string {
    return execFileSync(CLI, ['-H', `unix://${this.socketPath}`, ...args], { encoding: 'utf8' }).trim()
  }

  /** Copies `image` from the machine's dockerd (read only there) into this one. */
  loadImage(image: string): void {
    const tar = join(this.dir, 'image.tar')
    execFileSync(CLI, ['-H', MACHINE_HOST, 'save', '-o', tar, image])
    this.cli('load', '-q', '-i', tar)
  }

  /** Ids of the containers in its data-root, whether or not it runs. */
  private containerIds(): string[] {
    try {
      return readdirSync(join(this.dir, 'data', 'containers')).filter((id) => /^[0-9a-f]{64}$/.test(id))
    } catch {
      return []
    }
  }

  logTail(lines = 20): string {
    try {
      return readFileSync(this.logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
    } catch {
      return '(no log)'
    }
  }

  /** Removes its containers, stops it and deletes the temp dir; throws if anything is left. */
  async cleanup(): Promise<void> {
    if (!this.child) await this.start().catch(() => {})
    if (this.child) {
      try {
        const ids = this.cli('ps', '-aq').split('\n').filter(Boolean)
        if (ids.length) this.cli('rm', '-f', '-v', ...ids)
      } catch {
        // the kill below still ends its containers
      }
      await this.stop()
    }
    const left = processesUnder(this.dir)
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    for (let i = 0; i < 50 && processesUnder(this.dir).length; i++) await sleep(100)
    if (left.length) removeContainerCgroups(this.containerIds())
    for (const mount of mountsUnder(this.dir)) {
      try {
        execFileSync('umount', [mount], { stdio: 'ignore' })
      } catch {
        execFileSync('umount', ['-l', mount], { stdio: 'ignore' })
      }
    }
    const stillRunning = processesUnder(this.dir)
    const stillMounted = mountsUnder(this.dir)
    if (stillRunning.length || stillMounted.length) {
      throw new Error(`private dockerd left pids [${stillRunning}] and mounts [${stillMounted}] in ${this.dir}`)
    }
    execFileSync('rm', ['-rf', '--one-file-system', this.dir])
    if (left.length) throw new Error(`private dockerd left processes behind (killed: ${left.join(', ')})`)
  }
}
