// What every tool's schema and description share: the optional session id, a path in the
// session's workspace, and the sentence saying where tools act.
'use strict'

const { z } = require('zod')

/** Every tool's description ends with where it acts. */
const INSIDE = "It acts inside the isolated session (a git clone of the project in its own container), never on the user's own files."

const session = z.string().min(1).optional().describe("The session id session_open returned; default: this connection's session, opened on first use")

const pathArg = z.string().min(1).describe("A path relative to the session's workspace folder (or absolute inside it)")

module.exports = { INSIDE, session, pathArg }
