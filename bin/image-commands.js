// The CLI's image commands: prune removes the images this library built for sessions
// (devcontainer builds, features, uid images) that no container uses.
'use strict'

const { UsageError } = require('./cli-common.js')

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `90s`, `15m`, `1h`, `2d` (or plain milliseconds) as milliseconds. */
function parseDuration(text) {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim())
  if (!match) throw new UsageError(`--older-than '${text}' is not a duration like 90s, 15m, 1h or 2d`)
  return Number(match[1]) * UNITS[match[2] ?? 'ms']
}

const commands = {
  async prune(args, workspaces) {
    const report = await workspaces.prune({
      dryRun: Boolean(args['dry-run']),
      olderThanMs: args['older-than'] === undefined ? undefined : parseDuration(args['older-than']),
    })
    if (args.json) {
      console.log(JSON.stringify(report, null, 2))
      return 0
    }
    const verb = args['dry-run'] ? 'would remove' : 'removed'
    console.log(`${verb} ${report.imagesRemoved.length} image(s)${report.imagesRemoved.map((i) => `\n  ${i}`).join('')}`)
    console.log(`kept ${report.kept.length} image(s) in use or too recent${report.kept.map((i) => `\n  ${i}`).join('')}`)
    return 0
  },
}

module.exports = { commands, parseDuration }
