// What a tool call answers: the structured result, serialized whole as the text part too
// (a client that ignores `structuredContent` still sees every field), or a tool error
// (`isError: true`) whose text starts with the error's stable code — the library's own
// (`ENOENT`, `DEVCONTAINER`, …) or this server's (`INVALID_ARGUMENT` for bad input,
// `LIMIT_EXCEEDED` past a bound, `EDIT_NO_MATCH`, `EDIT_AMBIGUOUS`, `NO_SESSION`,
// `SESSION_AMBIGUOUS`, `SESSION_BUSY`, `COMMAND_NOT_FOUND`).
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
 * A successful result: the fields, and the same fields as JSON text.
 * @param {Record<string, unknown>} structured
 */
function ok(structured) {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured }
}

/** Where a tool error's fields go: `_meta`, since clients check `structuredContent` against the tool's outputSchema even in an error. */
const ERROR_META = 'dev.container-isolation/error'

/**
 * A tool error for any failure: the library's and ours keep their code; anything
 * without one (a bug of ours) is `INTERNAL_ERROR`. The text is `CODE: message`; the same
 * fields (and `refusals` or `sessions` where the error has them) are in `_meta` under
 * ERROR_META.
 * @param {unknown} err
 */
function failure(err) {
  const e = /** @type {{ code?: unknown, message?: unknown, refusals?: unknown, sessions?: unknown }} */ (err ?? {})
  const code = typeof e.code === 'string' && e.code ? e.code : 'INTERNAL_ERROR'
  const message = typeof e.message === 'string' ? e.message : String(err)
  const error = { code, message }
  if (Array.isArray(e.refusals)) error.refusals = e.refusals
  if (Array.isArray(e.sessions)) error.sessions = e.sessions
  return { content: [{ type: 'text', text: `${code}: ${message}` }], _meta: { [ERROR_META]: error }, isError: true }
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

module.exports = { ToolError, invalid, ok, failure, lastLines, clip, ERROR_META }
