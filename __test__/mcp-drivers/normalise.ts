// What two clients' transcripts of one scenario are compared on: everything but what
// varies from run to run. Timings go (`ms`, `durationMs`, commits' `timeMs`, "in 913 ms"), random parts of
// names are masked (session ids, commit ids, log paths with a pid), progress is compared
// by its first line only (how output is split into notifications, and which last lines
// come in the result only, depend on timing), and
// a client-side error keeps its code but not the SDK's wording.
import type { Entry } from './steps'

const MASKS: Array<[RegExp, string]> = [
  [/\bmcp-\d+-[0-9a-f]{8}\b/g, 'mcp-<pid>-<random>'],
  [/\/threads\/mcp-\d+\//g, '/threads/mcp-<n>/'],
  [/\b([a-z0-9]+(?:-[a-z0-9]+)*)-[0-9a-f]{6}\b/g, '$1-<id>'],
  [/\b[0-9a-f]{40}\b/g, '<commit>'],
  [/\bmcp-\d+-\d+\b/g, 'mcp-<pid>-<n>'],
  [/\b\d+ ms\b/g, '<n> ms'],
]
// A commit's time: the two clients commit in the same second, or not.
const TIMINGS = new Set(['ms', 'durationMs', 'timeMs'])

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/**
 * `transcript` without what varies between runs and clients; the entries of `timingDependent`
 * steps are kept by id only.
 */
export function normalise(transcript: Entry[], timingDependent: Set<string> = new Set()): Json[] {
  return transcript.map((entry) => {
    if (timingDependent.has(entry.id)) return { id: entry.id }
    const copy = structuredClone(entry) as Record<string, Json>
    if (Array.isArray(copy.progress)) copy.progress = progressLines(copy.progress as Array<{ message: string | null }>)
    const error = copy.error as { code: Json; message: Json } | undefined
    if (error && typeof error.code === 'string') error.message = '<client message>'
    return mask(copy)
  })
}

function progressLines(progress: Array<{ message: string | null }>): Json {
  return { firstLine: progress.length ? (progress[0].message ?? '').split('\n')[0] : null }
}

/** A text part that is a serialized result, as that result. */
function parsedObject(text: string): Json | undefined {
  if (!text.startsWith('{')) return undefined
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

function mask(value: Json): Json {
  if (typeof value === 'string') {
    const parsed = parsedObject(value)
    return parsed === undefined ? MASKS.reduce((s, [pattern, by]) => s.replace(pattern, by), value) : mask(parsed)
  }
  if (Array.isArray(value)) return value.map(mask)
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !TIMINGS.has(key) && key !== 'progressNotifications')
        .map(([key, v]) => [key, mask(v)]),
    )
  }
  return value
}
