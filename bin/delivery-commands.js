// The CLI's review-and-deliver commands: diff and log read a session's changes, export
// writes them as a branch of the project, push sends them to a remote from the host.
// Credentials come from the environment (or the SSH agent), never from an argument.
'use strict'

const { readFileSync } = require('node:fs')
const { UsageError, session, table, withProgress } = require('./cli-common.js')

/**
 * Credentials for `url` from the environment: CONTAINER_ISOLATION_GIT_TOKEN (with
 * CONTAINER_ISOLATION_GIT_USERNAME) for http(s); CONTAINER_ISOLATION_SSH_KEY and
 * CONTAINER_ISOLATION_SSH_KNOWN_HOSTS for ssh (else the SSH agent and ~/.ssh/known_hosts).
 */
function credentialsFor(url) {
  const env = process.env
  if (/^https?:\/\//i.test(url)) {
    if (!env.CONTAINER_ISOLATION_GIT_TOKEN) return undefined
    return { username: env.CONTAINER_ISOLATION_GIT_USERNAME, password: env.CONTAINER_ISOLATION_GIT_TOKEN }
  }
  if (/^[a-z+]+:\/\//i.test(url) && !/^(ssh|git\+ssh|ssh\+git):\/\//i.test(url)) return undefined
  if (!env.CONTAINER_ISOLATION_SSH_KEY && !env.CONTAINER_ISOLATION_SSH_KNOWN_HOSTS) return undefined
  return { sshKeyFile: env.CONTAINER_ISOLATION_SSH_KEY, sshKnownHostsFile: env.CONTAINER_ISOLATION_SSH_KNOWN_HOSTS }
}

/** The remote options of `push` and `up --repo`: URL, credentials, a CA file's PEM. */
function remoteOptions(args, url) {
  const remote = { url, credentials: credentialsFor(url) }
  if (args['ca-file']) remote.caCertificate = readFileSync(args['ca-file'], 'utf8')
  return remote
}

const commands = {
  async diff(args, workspaces) {
    const changes = await workspaces.changes(session(args, 'diff'), { patch: !args.stat })
    if (args.json) {
      console.log(JSON.stringify(changes, null, 2))
      return 0
    }
    if (changes.baseKind !== 'recorded') process.stderr.write(`history rewritten: counted from ${changes.baseKind} ${changes.base.slice(0, 12)}, not the recorded base ${changes.recordedBase.slice(0, 12)}\n`)
    if (!args.stat) {
      process.stdout.write(changes.patch ?? '')
      if (changes.uncommittedPatch) {
        process.stderr.write('(uncommitted work, in no commit yet:)\n')
        process.stdout.write(changes.uncommittedPatch)
      }
      if (changes.patchTruncated || changes.uncommittedPatchTruncated) process.stderr.write('(diff cut at 1 MiB: see --stat or --json)\n')
      return 0
    }
    const stat = (f) => (f.binary ? 'binary' : `+${f.additions} -${f.deletions}`)
    const name = (f) => (f.oldPath ? `${f.oldPath} -> ${f.path}` : f.path)
    console.log(table(changes.files.map((f) => ({ status: f.status, lines: stat(f), path: name(f) })), ['status', 'lines', 'path']))
    const added = changes.files.reduce((n, f) => n + f.additions, 0)
    const deleted = changes.files.reduce((n, f) => n + f.deletions, 0)
    console.log(`${changes.files.length} file(s) changed, +${added} -${deleted}, in ${changes.commits.length} commit(s) since ${changes.base.slice(0, 12)}`)
    if (changes.uncommitted.length) {
      console.log(`\nuncommitted (${changes.uncommitted.length}):`)
      for (const u of changes.uncommitted) console.log(`  ${u.status} ${u.oldPath ? `${u.oldPath} -> ` : ''}${u.path}`)
    }
    return 0
  },

  async log(args, workspaces) {
    const { base, baseKind, recordedBase, head, commits } = await workspaces.changes(session(args, 'log'))
    if (args.json) {
      console.log(JSON.stringify({ base, baseKind, recordedBase, head, commits }, null, 2))
      return 0
    }
    for (const c of commits) console.log(`${c.id.slice(0, 12)}  ${new Date(c.timeMs).toISOString().slice(0, 16).replace('T', ' ')}  ${c.authorName} <${c.authorEmail}>  ${c.summary}`)
    console.log(`${commits.length} commit(s) since ${baseKind === 'recorded' ? 'the base' : baseKind} ${base.slice(0, 12)}`)
    return 0
  },

  async export(args, workspaces) {
    const sessionId = session(args, 'export')
    const info = await workspaces.get(sessionId)
    const done = await withProgress(
      'exporting',
      workspaces.export(sessionId, { branch: args.branch, uncommitted: Boolean(args.uncommitted), message: args.message, force: Boolean(args.force) }),
    )
    if (args.json) {
      console.log(JSON.stringify(done, null, 2))
      return 0
    }
    const what = done.snapshot ? `HEAD ${done.head.slice(0, 12)} + uncommitted work as ${done.snapshot.slice(0, 12)}` : `HEAD ${done.head.slice(0, 12)}`
    console.log(`${sessionId}: ${what} written as branch ${done.branch} of ${done.projectDir} (${done.objectsCopied} object(s) copied${done.previous ? `; it was at ${done.previous.slice(0, 12)}` : ''})`)
    console.log(`review:  git -C ${done.projectDir} log -p HEAD..${done.branch}`)
    if (info?.snapshotOf || info?.repositoryUrl) {
      // The library's own repository (a folder's snapshot, a remote's clone) goes to the trash with the session.
      console.log(`fetch:   git fetch ${done.projectDir} ${done.branch}   (from a repository of yours, before \`down\`${info.snapshotOf ? `; ${info.snapshotOf} is not a git repository and was not written` : ''})`)
    } else console.log(`merge:   git -C ${done.projectDir} merge ${done.branch}`)
    return 0
  },

  async push(args, workspaces) {
    const sessionId = session(args, 'push')
    if (!args.url) throw new UsageError('push needs --url')
    const opts = { ...remoteOptions(args, args.url), branch: args.branch, uncommitted: Boolean(args.uncommitted), message: args.message, force: Boolean(args.force) }
    const done = await withProgress('pushing', workspaces.push(sessionId, opts))
    if (args.json) console.log(JSON.stringify(done, null, 2))
    else console.log(`${sessionId}: ${done.commit.slice(0, 12)} pushed to ${done.reference} of ${done.url}`)
    return 0
  },
}

module.exports = { commands, remoteOptions }
