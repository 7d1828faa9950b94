// Questions for the user, asked through the MCP client (elicitation) when it declared the
// capability: may a session reach a host its egress policy leaves undecided, may a
// devcontainer.json have what it asks beyond the session, and may an export move an
// existing branch. Without the capability, or when the user declines, cancels or does not
// answer in time, the answer is no.
'use strict'

/** The egress relay gives an undecided host 30 s; the question ends a little earlier. */
const EGRESS_ANSWER_MS = 29_000
/** The user reads a list of grants: longer, within a client's usual request timeout. */
const TRUST_ANSWER_MS = 55_000
/** As long for a branch about to be moved. */
const FORCE_ANSWER_MS = 55_000

const YES_NO = {
  type: 'object',
  properties: { allow: { type: 'boolean', title: 'Allow', default: true } },
  required: ['allow'],
}

class AskUser {
  /** @param {import('@modelcontextprotocol/sdk/server/index.js').Server} server */
  constructor(server) {
    this.server = server
  }

  /** Whether the client can show the user a form. */
  canAsk() {
    return Boolean(this.server.getClientCapabilities()?.elicitation?.form)
  }

  /**
   * Yes only when the user accepted with `allow` true.
   * @param {string} message
   * @param {number} timeout
   */
  async yesNo(message, timeout) {
    if (!this.canAsk()) return false
    try {
      const answer = await this.server.elicitInput({ mode: 'form', message, requestedSchema: YES_NO }, { timeout })
      return answer.action === 'accept' && answer.content?.allow !== false
    } catch {
      return false
    }
  }

  /**
   * The policy's `onRequest` for a host it leaves undecided.
   * @param {{ sessionId: string, host: string, port: number }} request
   * @param {string | undefined} title the session's title
   */
  egress(request, title) {
    const who = title ? `session "${title}" (${request.sessionId})` : `session ${request.sessionId}`
    return this.yesNo(
      `Allow the isolated ${who} to reach ${request.host}:${request.port}? Its egress policy does not decide this host; the answer holds for this session.`,
      EGRESS_ANSWER_MS,
    )
  }

  /**
   * Whether the user lets an export move `branch` of `repository` if it exists.
   * @param {{ branch: string, repository: string, sessionId: string, title?: string }} request
   */
  forceExport({ branch, repository, sessionId, title }) {
    const who = title ? `session "${title}" (${sessionId})` : `session ${sessionId}`
    return this.yesNo(
      `Let the isolated ${who} move the branch ${branch} of ${repository} to its work? If the branch exists it is overwritten (force); its old commit stays only in the reflog.`,
      FORCE_ANSWER_MS,
    )
  }

  /**
   * Whether the user grants what a devcontainer.json asks beyond the session.
   * @param {{ field: string, what: string, allow: string }[]} refusals
   */
  devcontainer(refusals) {
    const items = refusals.map((r) => `- ${r.field}: ${r.what} (trust.${r.allow})`).join('\n')
    return this.yesNo(
      `The project's devcontainer.json asks for what reaches beyond the isolated session:\n${items}\nAllow these for this session?`,
      TRUST_ANSWER_MS,
    )
  }
}

/**
 * `trust` with every refusal's grant added: lists united, flags set.
 * @param {Record<string, unknown> | undefined} trust
 * @param {{ trust: Record<string, unknown> }[]} refusals
 */
function withGrants(trust, refusals) {
  const merged = { ...(trust ?? {}) }
  for (const { trust: grant } of refusals) {
    for (const [option, value] of Object.entries(grant)) {
      if (Array.isArray(value)) {
        const had = Array.isArray(merged[option]) ? merged[option] : []
        merged[option] = [...new Set([...had, ...value])]
      } else merged[option] = value
    }
  }
  return merged
}

module.exports = { AskUser, withGrants }
