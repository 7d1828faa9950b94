// The MCP server's tools: listed with their titles, JSON Schemas (input and output) and
// annotations, and called with arguments checked against them. An unknown tool is the
// JSON-RPC error invalid params (-32602), as MCP says; every other failure — arguments
// that do not fit (unknown ones included), a library rejection — is a tool result with
// `isError: true` whose text starts with the error's code, so the model can correct
// itself. Nothing a client sends ends the server.
'use strict'

const { Server } = require('@modelcontextprotocol/sdk/server/index.js')
const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js')
const { z } = require('zod')
const { failure, invalid } = require('./results.js')
const { sessionTools } = require('./session-tools.js')
const { checkpointTools } = require('./checkpoint-tools.js')
const { sessionExport } = require('./export-tool.js')
const { fileTools } = require('./file-tools.js')
const { searchTools } = require('./search-tools.js')
const { commandTools } = require('./command-tools.js')
const { version } = require('../../package.json')

const TOOLS = [...sessionTools, ...checkpointTools, sessionExport, ...fileTools, ...searchTools, ...commandTools]

/** What the server tells the model about all its tools. */
function instructions({ exportPrefix, autoSession }) {
  const sessions = autoSession
    ? 'A tool called without a session id uses the one open session; when none is open it opens one; when several are, it refuses and lists them.'
    : 'Open a session with session_open first (session_list also shows sessions kept by an earlier server, which session_open attaches). A tool called without a session id uses the one open session; with several open it refuses and lists them.'
  return `Every tool of this server acts inside an isolated session: a git clone of the user's project in a container of its own. The user's own files are never touched; session_export brings the session's work home as a new branch under ${exportPrefix} of the project (for a project folder that is not a git repository, of the library's repository of its snapshot, which the user fetches from). Paths are relative to the session's workspace folder. ${sessions} Long commands: run_command returns after waitMs (default 45 s) with a commandId while the command goes on; command_output reads and waits for it, command_kill stops it.`
}

/** A zod schema as JSON Schema, `required` always present. */
function jsonSchema(schema, io) {
  const json = z.toJSONSchema(schema, { io })
  delete json.$schema
  return { ...json, required: json.required ?? [] }
}

/** Zod's issues as one line: where, and what is wrong; unknown arguments named with the known ones. */
function describeIssues(tool, error) {
  const known = Object.keys(tool.schema.shape)
  return error.issues
    .map((i) =>
      i.code === 'unrecognized_keys'
        ? `unknown argument${i.keys.length === 1 ? '' : 's'} ${i.keys.map((k) => `'${k}'`).join(', ')} (${tool.name} takes ${known.length ? known.join(', ') : 'none'})`
        : `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`,
    )
    .join('; ')
}

/**
 * The tools as `tools/list` gives them: descriptions and annotations follow the server's
 * settings and, for `forceUsable`, the client's capabilities.
 * @param {{ keep: boolean, egress?: unknown, exportPrefix: string, forceUsable: boolean, autoSession: boolean, cluster?: boolean }} settings
 */
function listing(settings) {
  return TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: typeof t.description === 'function' ? t.description(settings) : t.description,
    inputSchema: jsonSchema(t.schema, 'input'),
    outputSchema: jsonSchema(t.output, 'output'),
    annotations: { title: t.title, ...t.annotations(settings) },
  }))
}

/**
 * The MCP server with the tools registered; `context` (sessions, workspaces, runtime,
 * exportPolicy, commands, keep, egress) is what every tool gets, with the request's
 * `extra` added per call.
 * @param {{ exportPrefix: string, autoSession: boolean, cluster?: boolean }} settings
 */
function createServer(settings) {
  const server = new Server({ name: 'container-isolation', version }, { capabilities: { tools: {} }, instructions: instructions(settings) })
  const byName = new Map(TOOLS.map((t) => [t.name, t]))
  /** @type {Record<string, any> | undefined} */
  let context
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: listing({ ...settings, keep: Boolean(context?.keep), egress: context?.egress, forceUsable: Boolean(context?.exportPolicy?.forceUsable()) }),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params
    const tool = byName.get(name)
    // The SDK answers with the error's own code and message (McpError would prefix it).
    if (!tool) throw Object.assign(new Error(`unknown tool '${name}'; this server's tools are ${TOOLS.map((t) => t.name).join(', ')}`), { code: ErrorCode.InvalidParams })
    const parsed = tool.schema.safeParse(args ?? {})
    if (!parsed.success) return failure(invalid(`${name}: ${describeIssues(tool, parsed.error)}`))
    try {
      return await tool.run(parsed.data, { ...context, extra })
    } catch (err) {
      return failure(err)
    }
  })
  return {
    server,
    /** Sets what every tool call gets besides its arguments. */
    provide(value) {
      context = value
    },
  }
}

module.exports = { createServer, TOOLS }
