// The remote-engine rig: "another machine" on this one, for the remote test pass and the
// remote benchmark. A network namespace joined to the host by a veth pair (a random /30 in
// 10.200-250.x.x), and in it, in a mount and pid namespace of their own, a private dockerd
// listening on tcp://<ip>:2376 with TLS (--tlsverify) and an sshd on <ip>:22 whose sessions
// find that dockerd at /var/run/docker.sock. The engine's data root is an empty directory
// seen from the machine, so its volumes are not visible here, as on a real remote host.
// The machine's dockerd is only read from (`docker save` of the test images).
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, openSync, readlinkSync, realpathSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { request } from 'node:https'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const CLI = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker'
const MACHINE_HOST = 'unix:///var/run/docker.sock'
const INIT = fileURLToPath(new URL('../__test__/fixtures/remote-engine-init.sh', import.meta.url))
const CHECKOUT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '')
const READY_MS = 60_000
/** Not in /tmp, which the rig does not see (hiddenPaths). */
const RIG_PARENT = '/var/tmp'
export const TEST_IMAGES = ['container-isolation-test:debian', 'container-isolation-test:busybox', 'container-isolation-test:noshell']

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const quiet = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts })
const ip = (...args) => quiet('ip', args)
const attempt = (fn) => {
  try {
    return fn()
  } catch {
    return undefined
  }
}

/** A random /30 in 10.200.0.0-10.250.255.255 that no interface of this machine has an address in. */
function freeSubnet() {
  const taken = ip('-o', '-4', 'addr').split('\n').map((l) => l.split(/\s+/)[3]?.split('/')[0]).filter(Boolean)
  for (let i = 0; i < 100; i++) {
    const [a, b, c] = randomBytes(3)
    const prefix = `10.${200 + (a % 51)}.${b}`
    const base = c & 0xfc
    if (taken.some((t) => t.startsWith(`${prefix}.`) && Math.floor(Number(t.split('.')[3]) / 4) * 4 === base)) continue
    return { host: `${prefix}.${base + 1}`, ns: `${prefix}.${base + 2}` }
  }
  throw new Error('remote-engine rig: no free /30 in 10.200-250.x.x')
}

/** CA, server certificate for `ip` (SAN IP), client certificate; and an unrelated CA. */
function makeTls(dir, address) {
  const openssl = (...args) => quiet('openssl', args, { cwd: dir })
  for (const d of ['ca', 'server', 'client', 'wrong']) mkdirSync(join(dir, d))
  const ca = (sub, cn) => openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${cn}`,
    '-keyout', `${sub}/ca-key.pem`, '-out', `${sub}/ca.pem`)
  ca('ca', 'remote-engine rig CA')
  ca('wrong', 'an unrelated CA')
  const leaf = (sub, cn, ext) => {
    writeFileSync(join(dir, sub, 'ext.cnf'), ext)
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', `${sub}/key.pem`, '-out', `${sub}/req.csr`)
    openssl('x509', '-req', '-in', `${sub}/req.csr`, '-CA', 'ca/ca.pem', '-CAkey', 'ca/ca-key.pem', '-CAcreateserial',
      '-days', '2', '-extfile', `${sub}/ext.cnf`, '-out', `${sub}/cert.pem`)
    openssl('x509', '-in', 'ca/ca.pem', '-out', `${sub}/ca.pem`)
  }
  leaf('server', 'remote-engine rig', `subjectAltName=IP:${address}\nextendedKeyUsage=serverAuth\n`)
  leaf('client', 'remote-engine rig client', 'extendedKeyUsage=clientAuth\n')
}

/** Host key, client key (authorized for root), sshd_config; known_hosts for `address`. */
function makeSsh(dir, address) {
  const keygen = (file, comment) => quiet('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', join(dir, file)])
  keygen('ssh_host_key', 'remote-engine rig host')
  keygen('ssh_client_key', 'remote-engine rig client')
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'ssh_client_key.pub')))
  const hostKey = readFileSync(join(dir, 'ssh_host_key.pub'), 'utf8').split(' ').slice(0, 2).join(' ')
  writeFileSync(join(dir, 'known_hosts'), `${address} ${hostKey}\n`)
  writeFileSync(join(dir, 'sshd_config'), [
    `ListenAddress ${address}:22`,
    `HostKey ${join(dir, 'ssh_host_key')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'PermitRootLogin prohibit-password',
    'AuthenticationMethods publickey',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'StrictModes no',
    'PermitUserEnvironment no',
    'AllowAgentForwarding no',
    'X11Forwarding no',
    'PrintMotd no',
    'MaxStartups 100:30:200',
    // MaxSessions stays at sshd's default (10), as on a stock server: the engine's ssh
    // tunnel must keep its shared connections under it.
    'LogLevel VERBOSE',
    '',
  ].join('\n'))
}

function pingsTls(address, tls, timeoutMs) {
  return new Promise((resolve) => {
    const req = request({
      host: address, port: 2376, path: '/_ping', timeout: timeoutMs,
      ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key),
    }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(false))
    req.end()
  })
}

/**
 * This machine's directories the rig must not see, so that it shares no files with the
 * tests, as a real remote host would not: the temp dirs, the homes, the checkout. Only
 * directories that exist, none inside another or holding the rig's own `dir`.
 */
function hiddenPaths(dir) {
  const within = (p, parent) => p === parent || p.startsWith(`${parent}/`)
  const candidates = [tmpdir(), '/tmp', homedir(), '/root', '/home', CHECKOUT]
    .map((p) => attempt(() => realpathSync(p)))
    .filter((p) => p && p !== '/' && statSync(p).isDirectory() && !within(dir, p))
  return [...new Set(candidates)].filter((p, _, all) => !all.some((q) => q !== p && within(p, q)))
}

/** Pids of every process whose pid namespace is `nsLink` (e.g. `pid:[4026532…]`). */
function processesIn(nsLink) {
  const pids = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    if (attempt(() => readlinkSync(`/proc/${entry}/ns/pid`)) === nsLink) pids.push(Number(entry))
  }
  return pids
}

export class RemoteEngine {
  /**
   * Short on purpose: unix socket paths under it max out at 107 bytes. Not in /tmp, which
   * the rig does not see (hiddenPaths).
   */
  dir = mkdtempSync(join(RIG_PARENT, 'cirr-'))
  id = randomBytes(3).toString('hex')
  netns = `ci-remote-${this.id}`
  hostIf = `cir${this.id}h`
  nsIf = `cir${this.id}n`
  address = freeSubnet()
  /** The engine's own unix socket (visible on this machine, for the rig's own checks). */
  socketPath = join(this.dir, 'docker.sock')
  tcpHost = `tcp://${this.address.ns}:2376`
  tls = { ca: join(this.dir, 'client', 'ca.pem'), cert: join(this.dir, 'client', 'cert.pem'), key: join(this.dir, 'client', 'key.pem') }
  /** A directory in DOCKER_CERT_PATH's layout (ca.pem, cert.pem, key.pem). */
  certPath = join(this.dir, 'client')
  /** A CA that did not sign the server's certificate. */
  wrongCa = join(this.dir, 'wrong', 'ca.pem')
  sshHost = `ssh://root@${this.address.ns}`
  ssh = { keyFile: join(this.dir, 'ssh_client_key'), knownHostsFile: join(this.dir, 'known_hosts') }
  /** Where the engine keeps its data, seen from this machine: always empty. */
  hostSideDataRoot = join(this.dir, 'root')
  #child
  #pidNs

  /** Sets everything up and starts the engine and sshd; loads `images` from the machine's dockerd. */
  async start({ images = TEST_IMAGES } = {}) {
    try {
      await this.#start(images)
    } catch (err) {
      const logs = `dockerd.log:\n${this.logTail('dockerd.log')}\nsshd.log:\n${this.logTail('sshd.log')}\ninit:\n${this.logTail('init.log')}`
      await this.cleanup().catch((e) => console.error(`remote-engine rig: cleanup after a failed start: ${e.message}`))
      throw new Error(`remote-engine rig did not start: ${err.message}\n${logs}`)
    }
    return this
  }

  async #start(images) {
    for (const d of ['data', 'root', 'exec']) mkdirSync(join(this.dir, d))
    writeFileSync(join(this.dir, 'daemon.json'), '{}\n')
    makeTls(this.dir, this.address.ns)
    makeSsh(this.dir, this.address.ns)

    ip('netns', 'add', this.netns)
    ip('link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', this.nsIf)
    ip('link', 'set', this.nsIf, 'netns', this.netns)
    ip('addr', 'add', `${this.address.host}/30`, 'dev', this.hostIf)
    ip('link', 'set', this.hostIf, 'up')
    ip('-n', this.netns, 'addr', 'add', `${this.address.ns}/30`, 'dev', this.nsIf)
    ip('-n', this.netns, 'link', 'set', this.nsIf, 'up')
    ip('-n', this.netns, 'link', 'set', 'lo', 'up')

    // nsenter --net rather than `ip netns exec`, which remounts /sys and so hides the cgroups
    // dockerd needs. unshare forks the init script as pid 1 of a new pid namespace, with a
    // private copy of the mounts (and a /proc of that namespace); --kill-child ends it with us.
    const log = openSync(join(this.dir, 'init.log'), 'a')
    this.#child = spawn('nsenter', [`--net=/run/netns/${this.netns}`, '--',
      'unshare', '--mount', '--pid', '--fork', '--kill-child=SIGKILL', '--mount-proc', '--propagation', 'private', '--',
      'bash', INIT, this.dir, this.address.ns, this.netns, ...hiddenPaths(this.dir),
    ], { stdio: ['ignore', log, log] })
    closeSync(log)
    let exited = false
    this.#child.once('exit', () => (exited = true))

    const deadline = Date.now() + READY_MS
    while (!(await pingsTls(this.address.ns, this.tls, 1000))) {
      if (exited) throw new Error('its init exited')
      if (Date.now() > deadline) throw new Error(`dockerd did not answer on ${this.tcpHost} within ${READY_MS / 1000} s`)
      await sleep(200)
    }
    const init = this.#initPid()
    this.#pidNs = readlinkSync(`/proc/${init}/ns/pid`)
    writeFileSync(join(this.dir, 'rig.json'), JSON.stringify({
      owner: process.pid, ownerStart: startTime(process.pid), netns: this.netns, hostIf: this.hostIf, pidNs: this.#pidNs,
    }))
    while (!existsSync(join(this.dir, 'sshd.pid')) || this.#sshEngineId() === undefined) {
      if (exited) throw new Error('its init exited')
      if (Date.now() > deadline) throw new Error(`sshd on ${this.address.ns}:22 did not reach the engine within ${READY_MS / 1000} s`)
      await sleep(200)
    }
    const viaTcp = this.cli('info', '--format', '{{.ID}}')
    if (this.#sshEngineId() !== viaTcp) throw new Error('ssh and tcp reach different engines')
    if (images.length) this.loadImages(images)
  }

  /** The init script's pid on this machine (unshare's child). */
  #initPid() {
    const children = attempt(() => readFileSync(`/proc/${this.#child.pid}/task/${this.#child.pid}/children`, 'utf8')) ?? ''
    const pid = Number(children.trim().split(/\s+/)[0])
    if (!pid) throw new Error('no init process under unshare')
    return pid
  }

  /** The engine's ID as `docker info` reports it through an ssh session on the rig. */
  #sshEngineId() {
    return attempt(() => this.sshRun('docker', 'info', '--format', '{{.ID}}'))
  }

  /** Runs a command on the rig "machine" over ssh (argv joined by ssh: pass plain words only). */
  sshRun(...command) {
    return quiet('ssh', ['-i', this.ssh.keyFile, '-o', `UserKnownHostsFile=${this.ssh.knownHostsFile}`,
      '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5', '-F', 'none',
      `root@${this.address.ns}`, '--', ...command]).trim()
  }

  /** The docker CLI against the rig over TLS. */
  cliArgs() {
    return ['-H', this.tcpHost, '--tlsverify', '--tlscacert', this.tls.ca, '--tlscert', this.tls.cert, '--tlskey', this.tls.key]
  }

  cli(...args) {
    return quiet(CLI, [...this.cliArgs(), ...args], { maxBuffer: 64 << 20 }).trim()
  }

  /** Copies images from the machine's dockerd (read only there) into the rig, over TLS. */
  loadImages(images) {
    const tar = join(this.dir, 'images.tar')
    quiet(CLI, ['-H', MACHINE_HOST, 'save', '-o', tar, ...images])
    try {
      this.cli('load', '-q', '-i', tar)
    } finally {
      attempt(() => execFileSync('rm', ['-f', tar]))
    }
  }

  /** Environment for child processes that should reach the rig (`DOCKER_HOST` over TLS). */
  dockerEnv() {
    return { DOCKER_HOST: this.tcpHost, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: this.certPath }
  }

  logTail(file, lines = 20) {
    return attempt(() => readFileSync(join(this.dir, file), 'utf8').trimEnd().split('\n').slice(-lines).join('\n')) ?? '(no log)'
  }

  /**
   * Removes the rig's containers, kills its pid namespace (everything in it), deletes the
   * netns, the veth pair, the cgroups and the directory; throws if anything is left.
   */
  async cleanup() {
    if (this.#child && this.#child.exitCode === null && this.#child.signalCode === null) {
      const ids = attempt(() => this.cli('ps', '-aq').split('\n').filter(Boolean)) ?? []
      if (ids.length) attempt(() => this.cli('rm', '-f', '-v', ...ids))
      const init = attempt(() => this.#initPid())
      if (init) attempt(() => process.kill(init, 'SIGKILL'))
      attempt(() => this.#child.kill('SIGKILL'))
      for (let i = 0; i < 100 && this.#child.exitCode === null && this.#child.signalCode === null; i++) await sleep(100)
    }
    await teardown({ dir: this.dir, netns: this.netns, hostIf: this.hostIf, pidNs: this.#pidNs })
  }
}

/** The pid's start time (clock ticks since boot), to tell it from a later process of the same pid. */
function startTime(pid) {
  const stat = attempt(() => readFileSync(`/proc/${pid}/stat`, 'utf8'))
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
}

/** Kills what is left in the rig's pid namespace and removes its netns, link, cgroups and dir. */
async function teardown({ dir, netns, hostIf, pidNs }) {
  const left = []
  if (pidNs) {
    for (const pid of processesIn(pidNs)) attempt(() => process.kill(pid, 'SIGKILL'))
    for (let i = 0; i < 100 && processesIn(pidNs).length; i++) await sleep(100)
    const pids = processesIn(pidNs)
    if (pids.length) left.push(`processes ${pids.join(', ')}`)
  }
  const hasNetns = () => ip('netns', 'list').split('\n').some((l) => l.split(' ')[0] === netns)
  const hasLink = () => attempt(() => ip('link', 'show', hostIf)) !== undefined
  if (hasNetns()) attempt(() => ip('netns', 'delete', netns))
  if (hasLink()) attempt(() => ip('link', 'delete', hostIf))
  for (let i = 0; i < 50 && hasLink(); i++) await sleep(100)
  // The containers' cgroups (dockerd's --cgroup-parent /<netns>), empty once their processes are gone.
  const cgroups = '/sys/fs/cgroup'
  for (const controller of ['', ...(attempt(() => readdirSync(cgroups)) ?? [])]) {
    const parent = join(cgroups, controller, netns)
    if (!existsSync(parent)) continue
    for (const id of attempt(() => readdirSync(parent, { withFileTypes: true })) ?? []) {
      if (id.isDirectory()) attempt(() => rmdirSync(join(parent, id.name)))
    }
    attempt(() => rmdirSync(parent))
    if (existsSync(parent)) left.push(`cgroup ${parent}`)
  }
  if (hasNetns()) left.push(`netns ${netns}`)
  if (hasLink()) left.push(`link ${hostIf}`)
  const mounts = readFileSync('/proc/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m === dir || m.startsWith(`${dir}/`))
  if (mounts.length) left.push(`mounts ${mounts.join(', ')}`)
  else attempt(() => execFileSync('rm', ['-rf', '--one-file-system', dir]))
  if (existsSync(dir)) left.push(`directory ${dir}`)
  if (left.length) throw new Error(`remote-engine rig ${netns} left: ${left.join('; ')}`)
}

/**
 * Removes the rigs of processes that are gone (a test run killed before its clean-up): each
 * rig records its owner in rig.json. Rigs of live processes are left alone. Returns their names.
 */
export async function sweepRigs(parent = RIG_PARENT) {
  const swept = []
  for (const entry of attempt(() => readdirSync(parent)) ?? []) {
    if (!entry.startsWith('cirr-')) continue
    const state = attempt(() => JSON.parse(readFileSync(join(parent, entry, 'rig.json'), 'utf8')))
    if (!state || startTime(state.owner) === state.ownerStart) continue
    await teardown({ ...state, dir: join(parent, entry) })
    swept.push(state.netns)
  }
  return swept
}

// `node scripts/remote-engine.mjs sweep` (scripts/sweep-test-containers.sh).
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'sweep') {
  const swept = await sweepRigs()
  if (swept.length) console.error(`[sweep] removed remote-engine rig(s) left by an interrupted run: ${swept.join(', ')}`)
}
