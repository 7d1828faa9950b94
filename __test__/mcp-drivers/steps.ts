// The step format both MCP client drivers run (driver.ts with the TypeScript SDK, driver.py
// with the Python SDK) and the transcript they return, one entry per step; the placeholder
// rule that lets a step use an earlier entry's value; and the canonical JSON (keys sorted,
// no spaces) in which both drivers' transcripts are byte-comparable. driver.py holds the
// same rules in Python: change both together.

/** How to start the server: argv and the environment added to the SDK's default one. */
export interface ServerCommand {
  command: string
  args: string[]
  env: Record<string, string>
  cwd?: string
}

/**
 * One step. Every string in a step may hold placeholders: a string that is exactly
 * `${stepId.path}` becomes that value of an earlier entry (JSON type kept), a string with
 * `${…}` inside is interpolated (strings as they are, other values as JSON).
 */
export type Step =
  | { id: string; op: 'list' }
  | { id: string; op: 'call'; tool: string; args?: Record<string, unknown>; progress?: boolean; timeoutMs?: number }
  | { id: string; op: 'request'; method: string; params?: unknown; timeoutMs?: number }
  | { id: string; op: 'raw'; line: string }
  | { id: string; op: 'cancel'; tool: string; args?: Record<string, unknown>; after: { progress: number } | { ms: number }; timeoutMs?: number }

/** A progress notification as the SDK's callback received it (absent fields are null). */
export interface Progress {
  progress: number
  total: number | null
  message: string | null
}

/**
 * What a failed step got. `code` is the JSON-RPC code when the server answered the
 * step's request with an error (`message` is then the server's own, not the SDK's
 * rewording); otherwise a client-side failure:
 * - `CLIENT_TIMEOUT`: the SDK's own request timeout ran out (no answer in time);
 * - `CLIENT_CLOSED`: the connection closed before an answer;
 * - `CLIENT_REQUEST`: the SDK would not send the request (no request left the client; the
 *   Python SDK's for `params` that is not an object);
 * - `CLIENT_VALIDATION`: the server answered, but the SDK refused the answer (a result not
 *   of the method's schema, structuredContent not of the tool's outputSchema, …);
 * - `DRIVER_PLACEHOLDER`: the step named a value no earlier entry has.
 */
export interface StepError {
  code: number | string
  message: string
}

/** A tools/call result, reduced to the fields clients act on (absent ones as null / false). */
export interface CallResult {
  content: unknown[]
  structuredContent: unknown
  isError: boolean
}

/** One transcript entry: the step's id, how long it took, and what came back. */
export type Entry = { id: string; ms: number } & (
  | { tools: unknown[] }
  | { result: unknown; progress?: Progress[] }
  | { error: StepError; progress?: Progress[] }
  | { response: unknown }
  | { cancelled: true; progress: Progress[]; notified: boolean }
)

/** What a driver returns: the transcript and what the connection negotiated. */
export interface DriverRun {
  transcript: Entry[]
  /** The protocol version the client offered in `initialize`, and the one the server chose. */
  protocol: { offered: string | null; negotiated: string | null }
  /** The server's stderr (for the Python driver, the driver's own too). */
  stderr: string
}

const WHOLE = /^\$\{([^}]+)\}$/
const INSIDE = /\$\{([^}]+)\}/g

/** The value at `stepId.path` of the entries so far; throws when there is none. */
function lookup(ref: string, entries: Map<string, unknown>): unknown {
  const [stepId, ...path] = ref.split('.')
  if (!entries.has(stepId)) throw new Error(`placeholder \${${ref}}: no earlier step '${stepId}'`)
  let value: unknown = entries.get(stepId)
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !(key in value)) throw new Error(`placeholder \${${ref}}: no '${key}' there`)
    value = (value as Record<string, unknown>)[key]
  }
  return value
}

/** `value` with its placeholders replaced from the earlier entries (by step id). */
export function resolvePlaceholders(value: unknown, entries: Map<string, unknown>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE.exec(value)
    if (whole) return lookup(whole[1], entries)
    return value.replace(INSIDE, (_, ref: string) => {
      const found = lookup(ref, entries)
      return typeof found === 'string' ? found : JSON.stringify(found)
    })
  }
  if (Array.isArray(value)) return value.map((v) => resolvePlaceholders(v, entries))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolvePlaceholders(v, entries)]))
  }
  return value
}

/** JSON with every object's keys sorted and no whitespace: what both drivers print. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value))
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    )
  }
  return value
}
