// Each line a client sends, screened before the SDK sees it, as JSON-RPC 2.0 and MCP
// want it answered: text that is not JSON is a parse error (-32700, with the id when the
// text begins as a request with one, so the client's call ends at once; else null); JSON that
// is not one request, notification or response — a batch, no `jsonrpc: "2.0"`, a
// method that is not a string, an id that is neither a string nor an integer, `params`
// that is not an object — is an invalid request (-32600, with the id when one can be
// read); a request to a method MCP defines whose params do not fit it (a `tools/call`
// without `name`) is invalid params (-32602) with a one-line reason. A notification is
// never answered: what is wrong with one is only reported.
'use strict'

const { ClientRequestSchema, ErrorCode, JSONRPCMessageSchema } = require('@modelcontextprotocol/sdk/types.js')

/** Each client request MCP defines, by method: the SDK's schema of it. */
const REQUESTS = new Map(ClientRequestSchema.options.map((schema) => [schema.shape.method.value, schema]))

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)
const isId = (v) => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v))

/** Zod's issues as one line: where, and what is wrong. */
function describeIssues(error) {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'params'}: ${i.message}`).join('; ')
}

/**
 * What to do with one line: `{ message }` to pass to the SDK, `{ answer }` to send back
 * instead, or `{ report }` to note and drop (a notification's fault).
 * @param {string} line
 * @returns {{ message?: object, answer?: object, report?: string }}
 */
function screen(line) {
  let value
  try {
    value = JSON.parse(line)
  } catch (err) {
    return refuse(idIn(line), ErrorCode.ParseError, `parse error: ${err.message}`)
  }
  if (Array.isArray(value)) return refuse(null, ErrorCode.InvalidRequest, 'invalid request: a JSON-RPC batch (MCP takes one message per line)')
  if (!isObject(value)) return refuse(null, ErrorCode.InvalidRequest, 'invalid request: a message is a JSON object')
  const id = isId(value.id) ? value.id : null
  const hasId = 'id' in value
  const notification = 'method' in value && !hasId
  const fault = envelopeFault(value)
  if (fault) return notification ? { report: `dropped a notification: ${fault}` } : refuse(id, ErrorCode.InvalidRequest, `invalid request: ${fault}`)
  if (typeof value.method === 'string' && hasId) {
    const schema = REQUESTS.get(value.method)
    const parsed = schema?.safeParse(value)
    if (parsed && !parsed.success) return refuse(id, ErrorCode.InvalidParams, `invalid params for ${value.method}: ${describeIssues(parsed.error)}`)
  }
  const message = JSONRPCMessageSchema.safeParse(value)
  if (!message.success) {
    if (notification) return { report: `dropped a notification: ${describeIssues(message.error)}` }
    return refuse(id, ErrorCode.InvalidRequest, `invalid request: ${describeIssues(message.error)}`)
  }
  return { message: message.data }
}

/** What makes `value` no JSON-RPC message at all, or undefined. */
function envelopeFault(value) {
  if (value.jsonrpc !== '2.0') return 'jsonrpc must be "2.0"'
  if ('id' in value && !isId(value.id)) return 'id must be a string or an integer'
  if ('method' in value) {
    if (typeof value.method !== 'string') return 'method must be a string'
    if ('params' in value && !isObject(value.params)) return 'params must be an object'
    return undefined
  }
  if (!('id' in value)) return 'a message has a method (a request or notification) or an id (a response)'
  if (!('result' in value) && !('error' in value)) return 'a response has a result or an error'
  return undefined
}

/**
 * The id of a message that cannot be parsed whole, read where a request has it: among the
 * first members of its object, or as its last member; null when neither is clear.
 * @param {string} head the text's start
 * @param {string} [tail] the text's end, for a message too large to keep whole
 */
function idIn(head, tail = head) {
  const text = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/.exec(tail)?.[1] ?? /^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"]*"\s*,)*\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(head)?.[1]
  if (text === undefined) return null
  const id = JSON.parse(text)
  return isId(id) ? id : null
}

const refuse = (id, code, message) => ({ answer: { jsonrpc: '2.0', id, error: { code, message } } })

module.exports = { screen, idIn }
