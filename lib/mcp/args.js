// `container-isolation mcp`'s command line: which project, image, egress and trust its
// sessions get, whether they outlive the server, and where state lives.
'use strict'

const path = require('node:path')

const USAGE = `usage: container-isolation mcp [--project DIR] [--image IMG] [--egress none|public|JSON]
                             [--trust JSON] [--keep] [--base-dir D]

An MCP server over stdio: every tool acts inside an isolated session (a git clone of the
project in its own container), never on the project's files.

  --project DIR   the git project sessions are cloned from (default: the current directory)
  --image IMG     the sessions' image (else devcontainer.json, else $CONTAINER_ISOLATION_IMAGE)
  --egress E      where sessions may connect: none, public (default), or a policy as JSON,
                  e.g. '{"allow":["registry.npmjs.org"]}'; a host the policy leaves undecided
                  is asked of the user through the client (elicitation), else refused
  --trust JSON    what devcontainer.json may reach beyond the session, e.g.
                  '{"capabilities":["SYS_PTRACE"]}'; without it the user is asked
  --keep          sessions outlive the server (stopped, for container-isolation ls/export);
                  by default their containers go and clones go to trash when it ends
  --base-dir D    state directory (default $CONTAINER_ISOLATION_HOME or ~/.container-isolation)

Register with Claude Code: claude mcp add container-isolation -- npx container-isolation mcp --project .`

class McpUsageError extends Error {}

const VALUED = ['--project', '--image', '--egress', '--trust', '--base-dir']

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
 * @param {string[]} argv the arguments after `mcp`
 * @returns {{ help?: boolean, projectDir: string, image?: string, egress?: 'none' | 'public' | object,
 *   trust?: object, keep: boolean, baseDir?: string }}
 */
function parseMcpArgs(argv) {
  const raw = {}
  let keep = false
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '-h' || a === '--help') return { help: true, projectDir: '', keep }
    if (a === '--keep') keep = true
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
  return {
    projectDir: path.resolve(raw.project ?? '.'),
    image: raw.image ?? process.env.CONTAINER_ISOLATION_IMAGE ?? undefined,
    egress,
    trust: raw.trust === undefined ? undefined : jsonObject('--trust', raw.trust),
    keep,
    baseDir: raw['base-dir'],
  }
}

module.exports = { parseMcpArgs, McpUsageError, USAGE }
