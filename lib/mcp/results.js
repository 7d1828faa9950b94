// What a tool call answers: structured content plus a short text, or a tool error
// (`isError: true`) whose text starts with the error's stable code — the library's own
// (`ENOENT`, `DEVCONTAINER`, …) or this server's (`INVALID_ARGUMENT` for bad input,
// `LIMIT_EXCEEDED` past a bound, `EDIT_NO_MATCH`, `EDIT_AMBIGUOUS`).
'use strict'

/** An error a tool reports to the client, with a stable `code`. */
class ToolError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message)
    this.code = code
  }
}

/** `INVALID_ARGUMENT`: the client's input is malformed or out of bounds. */
const invalid = (message) => new ToolError('INVALID_ARGUMENT', message)

/**
 * A successful result.
 * @param {string} text what the model reads
 * @param {Record<string, unknown>} structured the same, as fields
 */
function ok(text, structured) {
  return { content: [{ type: 'text', text }], structuredContent: structured }
}

/**
 * A tool error for any failure: the library's and ours keep their code; anything
 * without one (a bug of ours) is `INTERNAL_ERROR`.
 * @param {unknown} err
 */
function failure(err) {
  const e = /** @type {{ code?: unknown, message?: unknown, refusals?: unknown }} */ (err ?? {})
  const code = typeof e.code === 'string' && e.code ? e.code : 'INTERNAL_ERROR'
  const message = typeof e.message === 'string' ? e.message : String(err)
  const error = { code, message }
  if (Array.isArray(e.refusals)) error.refusals = e.refusals
  return { content: [{ type: 'text', text: `${code}: ${message}` }], structuredContent: { error }, isError: true }
}

/**
 * Keeps the last lines of `lines` that fit in `maxLines` and `maxBytes` of text, as
 * `ShellResult.output` does; says how many were left out.
 * @template {{ text: string }} T
 * @param {T[]} lines
 * @param {number} maxLines
 * @param {number} maxBytes
 * @returns {{ kept: T[], omitted: number }}
 */
function lastLines(lines, maxLines, maxBytes) {
  let bytes = 0
  let start = lines.length
  while (start > 0 && lines.length - start < maxLines) {
    const size = Buffer.byteLength(lines[start - 1].text) + 1
    if (bytes + size > maxBytes) break
    bytes += size
    start--
  }
  return { kept: lines.slice(start), omitted: start }
}

/** `text` cut to at most `max` characters, marked when cut. */
function clip(text, max) {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

module.exports = { ToolError, invalid, ok, failure, lastLines, clip }
