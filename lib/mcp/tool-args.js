// What every tool's schema and description share: argument objects that refuse unknown
// keys, the optional session id, a path in the session's workspace, and the sentence
// saying where tools act.
'use strict'

const { z } = require('zod')

/** Every tool's description ends with where it acts. */
const INSIDE = "It acts inside the isolated session (a git clone of the project in its own container), never on the user's own files."

/** A tool's arguments: unknown keys are refused (a `timeout` meant as `timeoutMs` is an error, not ignored). */
const strict = (shape) => z.strictObject(shape)

/** A tool that only reads changes nothing, unless a call without a session opens one (--auto-session). */
const reading = ({ autoSession }) => ({ readOnlyHint: !autoSession, destructiveHint: false, idempotentHint: true, openWorldHint: false })

const session = z.string().min(1).max(128).optional().describe('The session id session_open returned; may be left out while exactly one session is open')

const pathArg = z.string().min(1).describe("A path relative to the session's workspace folder (or absolute inside it)")

module.exports = { INSIDE, strict, reading, session, pathArg }
