// `container-isolation mcp`'s command line: which project, image, egress and trust its
// sessions get, which branches their work may be exported to, whether they outlive the
// server, and where state lives.
'use strict'

const path = require('node:path')
const { homedir, tmpdir } = require('node:os')

const USAGE = `usage: container-isolation mcp [--project DIR] [--image IMG] [--egress none|public|JSON]
                             [--trust JSON] [--export-prefix P] [--allow-force-export]
                             [--keep] [--auto-session] [--pool N] [--base-dir D]
                             [--kubernetes [--kubeconfig F] [--kube-context C] [--namespace N]]

An MCP server over stdio: every tool acts inside an isolated session (a git clone of the
project in its own container), never on the project's files. Nothing is ever written into
the project folder except the branches session_export writes, under the export prefix; a
folder that is not a git repository is only read (a snapshot of it is cloned, and exports
go to the snapshot's repository under the base directory).

  --project DIR   the project sessions are cloned from (default: the current directory)
  --image IMG     the sessions' image (else devcontainer.json, else $CONTAINER_ISOLATION_IMAGE)
  --egress E      where sessions may connect: none, public (default), or a policy as JSON,
                  e.g. '{"allow":["registry.npmjs.org"]}'; a host the policy leaves undecided
                  is asked of the user through the client (elicitation), else refused
  --trust JSON    what devcontainer.json may reach beyond the session, e.g.
                  '{"capabilities":["SYS_PTRACE"]}'; without it the user is asked
  --export-prefix P
                  the branches session_export may write: only those under P (default
                  session/; a ref prefix ending in /, e.g. agent/)
  --allow-force-export
                  session_export may move an existing branch under the prefix (force);
                  without it the user is asked each time through the client (elicitation),
                  and a client that cannot ask gets a refusal
  --keep          sessions outlive the server (stopped, with their command logs), for a
                  later server on the same project (session_list shows them, session_open
                  takes one up) or container-isolation ls/export; by default their
                  containers, clones and logs go when it ends
  --auto-session  a tool called without a session while none is open opens one (by
                  default it answers NO_SESSION: the agent opens one with session_open)
  --pool N        keep N containers (1..16) created and started for the settings of the
                  latest session_open, so that the next one is ready at once
  --base-dir D    state directory (default $CONTAINER_ISOLATION_HOME or ~/.container-isolation)
  --kubernetes, --kubeconfig F, --kube-context C, --namespace N
                  sessions as Pods of a Kubernetes cluster (default: as kubectl finds it), each
                  given its clone and read back, with no route out but --egress's relay;
                  devcontainer.json as far as a cluster allows it (no build, no features),
                  --pool as Pods made ahead; checkpoints there hold the repository only

Register with Claude Code: claude mcp add container-isolation -- npx container-isolation mcp --project .`

class McpUsageError extends Error {}

const VALUED = ['--project', '--image', '--egress', '--trust', '--base-dir', '--export-prefix', '--pool', '--kubeconfig', '--kube-context', '--namespace']
const DEFAULT_EXPORT_PREFIX = 'session/'

/** A JSON option that must be an object. */
function jsonObject(flag, text) {
  let value
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new McpUsageError(`${flag} is not JSON: ${err.message}`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new McpUsageError(`${flag} must be a JSON object`)
  return value
}

/**
 * A prefix of branch names, as git's check-ref-format would take `refs/heads/<prefix>x`:
 * folders of non-empty names ending in `/`, none starting with `.` or `-` or ending in
 * `.lock`, without `..`, `@{`, spaces, control characters or any of `~^:?*[\`.
 */
function exportPrefix(text) {
  const why = (reason) => new McpUsageError(`--export-prefix ${JSON.stringify(text)} is not a ref prefix: ${reason}`)
  if (!text.endsWith('/')) throw why("it must end with '/' (e.g. agent/)")
  if (text.length > 200) throw why('it is over 200 characters')
  if (text.includes('..') || text.includes('@{')) throw why("it holds '..' or '@{'")
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(text)) throw why('it holds a space, a control character or one of ~^:?*[\\')
  for (const part of text.slice(0, -1).split('/')) {
    if (!part) throw why('a name in it is empty')
    if (part.startsWith('.') || part.startsWith('-')) throw why(`'${part}' starts with '.' or '-'`)
    if (part.endsWith('.lock') || part.endsWith('.')) throw why(`'${part}' ends with '.lock' or '.'`)
    if (part === '@') throw why("'@' is not a name")
  }
  return text
}

/** The library's own default: `$CONTAINER_ISOLATION_HOME`, else `~/.container-isolation`. */
function defaultBaseDir() {
  return process.env.CONTAINER_ISOLATION_HOME || path.join(process.env.HOME || homedir() || tmpdir(), '.container-isolation')
}

/**
 * The cluster of `--kubernetes` (or any of its options), where what only an engine session
 * has is a usage error; `undefined` without them.
 */
function clusterOptions(raw) {
  if (!raw.kubernetes && ['kubeconfig', 'kube-context', 'namespace'].every((k) => raw[k] === undefined)) return undefined
  const cluster = {}
  if (raw.kubeconfig !== undefined) cluster.kubeconfig = raw.kubeconfig
  if (raw['kube-context'] !== undefined) cluster.context = raw['kube-context']
  if (raw.namespace !== undefined) cluster.namespace = raw.namespace
  return cluster
}

/**
 * @param {string[]} argv the arguments after `mcp`
 * @returns {{ help?: boolean, projectDir: string, image?: string, egress?: 'none' | 'public' | object,
 *   trust?: object, keep: boolean, autoSession: boolean, pool?: number, baseDir: string, exportPrefix: string, allowForceExport: boolean }}
 */
function parseMcpArgs(argv) {
  const raw = {}
  let keep = false
  let allowForceExport = false
  let autoSession = false
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '-h' || a === '--help') return { help: true, projectDir: '', keep, autoSession, baseDir: '', exportPrefix: DEFAULT_EXPORT_PREFIX, allowForceExport }
    if (a === '--keep') keep = true
    else if (a === '--kubernetes') raw.kubernetes = true
    else if (a === '--auto-session') autoSession = true
    else if (a === '--allow-force-export') allowForceExport = true
    else if (VALUED.includes(a)) {
      if (i + 1 >= argv.length) throw new McpUsageError(`${a} needs a value`)
      raw[a.slice(2)] = argv[++i]
    } else throw new McpUsageError(`unknown argument ${a}`)
  }
  let egress
  if (raw.egress === 'none' || raw.egress === 'public') egress = raw.egress
  else if (raw.egress !== undefined) {
    if (raw.egress.trim().startsWith('{')) egress = jsonObject('--egress', raw.egress)
    else throw new McpUsageError('--egress is none, public or a policy as JSON')
  }
  let pool
  if (raw.pool !== undefined) {
    pool = Number(raw.pool)
    if (!/^[0-9]+$/.test(raw.pool) || pool < 1 || pool > 16) throw new McpUsageError('--pool is a number of containers from 1 to 16')
  }
  const kubernetes = clusterOptions(raw)
  const image = raw.image ?? process.env.CONTAINER_ISOLATION_IMAGE ?? undefined
  return {
    projectDir: path.resolve(raw.project ?? '.'),
    kubernetes,
    pool,
    image,
    egress,
    trust: raw.trust === undefined ? undefined : jsonObject('--trust', raw.trust),
    keep,
    autoSession,
    baseDir: path.resolve(raw['base-dir'] ?? defaultBaseDir()),
    exportPrefix: raw['export-prefix'] === undefined ? DEFAULT_EXPORT_PREFIX : exportPrefix(raw['export-prefix']),
    allowForceExport,
  }
}

module.exports = { parseMcpArgs, McpUsageError, USAGE, DEFAULT_EXPORT_PREFIX }
