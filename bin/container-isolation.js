#!/usr/bin/env node
// The container-isolation CLI: see, start, use and clean up agent sessions from a terminal.
// A thin layer over the addon; every command takes --json for scripts.
'use strict'

const os = require('node:os')
const path = require('node:path')
const addon = require('../lib/index.js')

const USAGE = `usage: container-isolation <command> [options]

  doctor [--container ID]              engines found, versions, sockets, round-trip latency, the
                                       session agent; with --container: the path it uses
  doctor --kubernetes [--kubeconfig F] [--kube-context C] [--namespace N] [--network-policy] [--image IMG]
                                       the cluster: API server, version, the permissions the
                                       credentials lack in the namespace, nodes, runtime classes;
                                       --network-policy: whether NetworkPolicy is enforced,
                                       measured with two probe Pods of IMG
  up <projectDir> [--session ID] [--image IMG] [--no-devcontainer] [--trust JSON]
     [--egress none|public|bridge|JSON] [--ref REF] [--pull missing|always|never]
  up --repo URL --session ID [--ref REF] [--ca-file PEM] [...]
                                       create (or start) the session's clone + container;
                                       --ref: the branch, tag or commit it starts at (default HEAD);
                                       --repo: clone a remote on the host instead of a project
                                       (credentials as for push);
                                       --trust: what devcontainer.json may reach beyond the
                                       session, e.g. '{"hostPaths":["/data"],"capabilities":["SYS_PTRACE"]}';
                                       --egress: where the session may connect (default public),
                                       e.g. '{"allow":["registry.npmjs.org","*.github.com"]}';
                                       --pull: when images come from their registry (default
                                       missing; credentials from the docker config); progress
                                       (pulls, builds, steps) is shown on stderr
  exec <session> -- <command...>       run a command in the session, streaming its output;
                                       exits with the command's exit code
  shell <session> [-- <command...>]    a terminal in the session (default: its bash, else sh),
                                       this terminal's size and resizes passed on; exits with the
                                       program's exit code; needs a terminal on stdin (else 2);
                                       exec -it <session> [-- <command...>] is the same
  ls                                   sessions with state, branch, clone path, age, owner
  diff <session> [--stat]              what the session changed since its base: the unified diff
                                       of its commits, then of its uncommitted work (cut at 1 MiB
                                       together), or with --stat one line per file plus the
                                       uncommitted and untracked paths
  log <session>                        the session's commits since its base, newest first
  export <session> [--branch B] [--uncommitted] [--message M] [--force]
                                       write the session's HEAD (with --uncommitted: a snapshot of
                                       its work tree on top) as branch B of its project (default
                                       session/<session>); prints how to review and merge it
  push <session> --url U [--branch B] [--uncommitted] [--message M] [--force] [--ca-file PEM]
                                       push the session's work from the host to branch B of U
                                       (default session/<session>); credentials from the environment:
                                       CONTAINER_ISOLATION_GIT_TOKEN (+ _GIT_USERNAME) for https,
                                       CONTAINER_ISOLATION_SSH_KEY / _SSH_KNOWN_HOSTS or the SSH
                                       agent for ssh; never from the session
  checkpoint <session> [--label L]     save the session: its clone and its container's own changes
  checkpoints <session>                its checkpoints, oldest first
  restore <session> <checkpoint>       put the session back to a checkpoint (its commands end)
  fork <session> --session NEW [--checkpoint C]
                                       a new session from a checkpoint (default: from it now)
  down <session>                       remove the container, move the clone to trash
  reap [--dry-run] [--active ID,...]   remove orphaned containers and clones
  mcp [--project DIR] [--image IMG] [--egress none|public|JSON] [--trust JSON] [--keep] [--auto-session]
      [--export-prefix P] [--allow-force-export]
                                       an MCP server over stdio: any MCP agent gets isolated
                                       sessions, exports only under P (default session/), never
                                       writes the project folder otherwise (mcp --help for more)
  prune [--dry-run] [--older-than 1h]  remove the images built for sessions (devcontainer builds,
                                       features, uid images) that no container uses

  --json        machine-readable output
  --host H      the engine: unix://…, tcp://host:port, ssh://[user@]host[:port] (default: as docker
                finds it: DOCKER_HOST, DOCKER_CONTEXT, the docker config's current context, then
                the usual sockets)
  --context C   a docker context instead of --host
  --tls         TLS to a tcp:// host with the files of DOCKER_CERT_PATH (or ~/.docker);
  --tls-ca F, --tls-cert F, --tls-key F
                the PEM files to use instead; the server is always verified, unless
  --tls-insecure-skip-verify
                is given
  --ssh-key F, --ssh-known-hosts F
                for ssh:// hosts (ssh -i F -o IdentitiesOnly=yes, -o UserKnownHostsFile=F)
  --kubernetes, --kubeconfig F, --kube-context C, --namespace N
                sessions on a Kubernetes cluster instead of an engine (up, exec, ls, diff, log,
                export, push, down, reap; default: as kubectl finds the cluster): each session a Pod
                with no route out but its egress relay (--egress as on an engine, but bridge),
                given its clone and read back (up reads devcontainer.json as far as a cluster
                allows it: no build, no features; docs/kubernetes.md)
  --base-dir D  state directory (default $CONTAINER_ISOLATION_HOME or ~/.container-isolation)
  up's image: --image, else devcontainer.json, else $CONTAINER_ISOLATION_IMAGE

exit codes: 0 ok, 1 failure (the error's code is printed), 2 usage, or the command's own (exec, shell)`

const { UsageError, table, age, withProgress, ENGINE_FLAGS, ENGINE_VALUED, engineOptions } = require('./cli-common.js')
const delivery = require('./delivery-commands.js')
const images = require('./image-commands.js')
const checkpoints = require('./checkpoint-commands.js')
const terminals = require('./shell-command.js')
const { progressReporter } = require('./progress-bar.js')
const kube = require('./kubernetes-commands.js')

const FLAGS = ['--json', '--dry-run', '--no-devcontainer', '--stat', '--uncommitted', '--force', ...ENGINE_FLAGS, ...kube.KUBE_FLAGS]
const VALUED = [...ENGINE_VALUED, ...kube.KUBE_VALUED, '--container', '--session', '--image', '--base-dir', '--active', '--trust', '--egress', '--ref', '--branch', '--message', '--url', '--ca-file', '--repo', '--pull', '--older-than', '--label', '--checkpoint']

function parse(argv) {
  const args = { _: [], rest: [] }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      args.rest = argv.slice(i + 1)
      break
    }
    if (a === '-it' || a === '-ti') args.it = true
    else if (FLAGS.includes(a)) args[a.slice(2)] = true
    else if (VALUED.includes(a)) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`)
      args[a.slice(2)] = argv[++i]
    } else if (a === '-h' || a === '--help') args.help = true
    else if (a.startsWith('--')) throw new UsageError(`unknown option ${a}`)
    else args._.push(a)
  }
  return args
}

const commands = {
  ...delivery.commands,
  ...images.commands,
  ...checkpoints.commands,
  ...terminals.commands,

  async doctor(args, workspaces, baseDir, engine) {
    const cluster = kube.kubernetesOptions(args)
    if (cluster) return kube.doctorKubernetes(args, cluster, baseDir)
    const found = []
    // With an engine named, that one; else the first of each family.
    for (const kind of engine ? [undefined] : ['docker', 'podman']) {
      const started = process.hrtime.bigint()
      try {
        const info = await addon.detectEngine({ ...engine, kind, timeoutMs: 5000 })
        found.push({ ...info, latencyMs: Number(process.hrtime.bigint() - started) / 1e6 })
      } catch (err) {
        found.push({ kind: kind ?? engine.host ?? engine.context ?? 'engine', error: err.message, code: err.code })
      }
    }
    if (args.json) console.log(JSON.stringify(found, null, 2))
    else {
      const ok = found.filter((f) => !f.error)
      console.log(table(ok.map((f) => ({ kind: f.kind, version: f.version, api: f.apiVersion, endpoint: f.endpoint, local: f.local ? 'yes' : 'no', latency: `${f.latencyMs.toFixed(1)} ms`, agent: f.agent })), ['kind', 'version', 'api', 'endpoint', 'local', 'latency', 'agent']))
      for (const f of found.filter((f) => f.error)) console.log(`${f.kind}: not found (${f.error})`)
    }
    if (args.container) {
      const access = await addon.containerAccess(args.container, engine)
      if (args.json) console.log(JSON.stringify(access, null, 2))
      else if (access.path === 'agent') {
        const line = access.line === 'direct' ? 'over the direct line' : `over the exec stream (${access.reason})`
        console.log(`${args.container}: session agent ${access.agentPath} (pid ${access.agentPid} in the container), ${line}`)
      }
      else console.log(`${args.container}: engine path (${access.reason})`)
    }
    return found.some((f) => !f.error) ? 0 : 1
  },

  async up(args, workspaces, baseDir, engine) {
    const [projectDir] = args._
    if (!projectDir === !args.repo) throw new UsageError('up needs a project directory, or --repo URL')
    if (args.repo && !args.session) throw new UsageError('up --repo needs --session')
    const project = projectDir ? path.resolve(projectDir) : undefined
    const repository = args.repo ? { ...delivery.remoteOptions(args, args.repo), ref: args.ref } : undefined
    const sessionId = args.session ?? addon.computeContainerName(project)
    let trust
    if (args.trust !== undefined) {
      try {
        trust = JSON.parse(args.trust)
      } catch (err) {
        throw new UsageError(`--trust is not JSON: ${err.message}`)
      }
    }
    let egress
    if (args.egress !== undefined) {
      if (['none', 'public', 'bridge'].includes(args.egress)) egress = args.egress
      else {
        try {
          egress = JSON.parse(args.egress)
        } catch (err) {
          throw new UsageError(`--egress is not none, public, bridge or JSON: ${err.message}`)
        }
      }
    }
    if (args.pull !== undefined && !['missing', 'always', 'never'].includes(args.pull)) throw new UsageError('--pull must be missing, always or never')
    // Nothing on stderr with --json.
    const progress = args.json ? undefined : progressReporter()
    let info
    try {
      info = await workspaces.create({
        projectDir: project,
        repository,
        sessionId,
        ref: repository ? undefined : args.ref,
        image: args.image ?? process.env.CONTAINER_ISOLATION_IMAGE,
        devcontainer: !args['no-devcontainer'],
        trust,
        egress,
        pull: args.pull,
        onProgress: progress?.onProgress,
      })
    } finally {
      progress?.finish()
    }
    if (args.json) console.log(JSON.stringify(info, null, 2))
    else console.log(`${info.sessionId}: ${info.state}, ${info.containerId} (${info.image}), clone ${info.clonePath} on ${info.branchName}, mounted at ${info.containerMountPath}${info.volume ? ` from volume ${info.volume}` : ''}`)
    return 0
  },

  async exec(args, workspaces) {
    if (args.it) return terminals.commands.shell(args, workspaces)
    const [sessionId] = args._
    if (!sessionId || args.rest.length === 0) throw new UsageError('exec needs a session and -- <command...>')
    const env = await withProgress('starting session', workspaces.environment(sessionId, 'cli'))
    const result = await env.shell.execute(args.rest, {
      toolRequestId: `cli-${process.pid}-${Date.now()}`,
      onOutput: args.json ? undefined : (line) => (line.stream === 'stderr' ? process.stderr : process.stdout).write(`${line.text}\n`),
    })
    if (args.json) console.log(JSON.stringify(result, null, 2))
    return result.signal ? 128 + (os.constants.signals[result.signal] ?? os.constants.signals.SIGTERM) : result.exitCode
  },

  async ls(args, workspaces, baseDir, engine) {
    // Sessions on a cluster: their Pods' owner is their host Lease, not read here.
    const runtime = engine?.kubernetes ? undefined : new addon.DockerRuntime({ baseDir, engine })
    const rows = []
    for (const ws of await workspaces.list()) {
      const labels = ws.state === 'missing' || !runtime ? {} : (await runtime.inspect(ws.containerId)).labels ?? {}
      const pid = labels['dev.container-isolation.owner-pid']
      // The same judgement reapOrphans makes (pid, start time, boot id).
      const owner = pid ? addon.ownerStatus(labels) : 'unknown'
      const checkpoints = (await workspaces.checkpoints(ws.sessionId).catch(() => [])).length
      rows.push({ ...ws, checkpoints, ownerPid: pid ? Number(pid) : undefined, ownerAlive: owner === 'unknown' ? undefined : owner === 'alive' })
    }
    if (args.json) console.log(JSON.stringify(rows, null, 2))
    else if (rows.length === 0) console.log('no sessions')
    else
      console.log(
        table(
          rows.map((r) => ({ session: r.sessionId, state: r.state, branch: r.branchName, clone: r.clonePath, age: age(r.createdAtMs), checkpoints: String(r.checkpoints), owner: r.ownerAlive === undefined ? '-' : `${r.ownerPid} ${r.ownerAlive ? 'alive' : 'gone'}` })),
          ['session', 'state', 'branch', 'clone', 'age', 'checkpoints', 'owner'],
        ),
      )
    return 0
  },

  async down(args, workspaces) {
    const [sessionId] = args._
    if (!sessionId) throw new UsageError('down needs a session')
    await workspaces.destroy(sessionId)
    if (args.json) console.log(JSON.stringify({ sessionId, destroyed: true }))
    else console.log(`${sessionId}: container removed, clone moved to trash`)
    return 0
  },

  async reap(args, workspaces, baseDir, engine) {
    const report = await addon.reapOrphans({
      baseDir,
      engine,
      dryRun: Boolean(args['dry-run']),
      activeSessionIds: args.active ? args.active.split(',').filter(Boolean) : undefined,
    })
    if (args.json) console.log(JSON.stringify(report, null, 2))
    else {
      const verb = args['dry-run'] ? 'would remove' : 'removed'
      console.log(`${verb} ${report.containersRemoved.length} container(s)${report.containersRemoved.map((c) => `\n  ${c}`).join('')}`)
      console.log(`${args['dry-run'] ? 'would move' : 'moved'} ${report.clonesTrashed.length} clone(s) to trash${report.clonesTrashed.map((c) => `\n  ${c}`).join('')}`)
      console.log(`kept ${report.kept.length} container(s)`)
    }
    return 0
  },
}

async function main(argv) {
  if (argv[0] === 'mcp') return require('../lib/mcp/index.js').main(argv.slice(1))
  let args
  try {
    args = parse(argv)
  } catch (err) {
    console.error(`${err.message}\n\n${USAGE}`)
    return 2
  }
  const name = args._.shift()
  if (args.help || !name) {
    console.log(USAGE)
    return name || args.help ? 0 : 2
  }
  const command = commands[name]
  if (!command) {
    console.error(`unknown command '${name}'\n\n${USAGE}`)
    return 2
  }
  const baseDir = args['base-dir']
  let engine
  try {
    const cluster = name === 'doctor' ? undefined : kube.kubernetesOptions(args)
    engine = cluster ? kube.clusterEngine(name, cluster, engineOptions(args)) : engineOptions(args)
  } catch (err) {
    console.error(`${err.message}\n\n${USAGE}`)
    return 2
  }
  const workspaces = new addon.Workspaces({ baseDir, engine })
  try {
    return await command(args, workspaces, baseDir, engine)
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${USAGE}`)
      return 2
    }
    if (args.json) console.log(JSON.stringify({ error: { code: err.code, message: err.message } }))
    else console.error(`error${err.code ? ` ${err.code}` : ''}: ${err.message}`)
    return 1
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
