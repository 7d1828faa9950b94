// The MCP server's tools: listed with their JSON Schemas, and called with arguments
// checked against them. Every failure — an unknown tool, arguments of the wrong type, a
// library rejection — is a tool result with `isError: true` whose text starts with the
// error's code; nothing a client sends ends the server.
'use strict'

const { Server } = require('@modelcontextprotocol/sdk/server/index.js')
const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js')
const { z } = require('zod')
const { failure, invalid } = require('./results.js')
const { sessionTools } = require('./session-tools.js')
const { fileTools } = require('./file-tools.js')
const { searchTools } = require('./search-tools.js')
const { runCommand } = require('./command-tool.js')
const { version } = require('../../package.json')

const TOOLS = [...sessionTools, ...fileTools, ...searchTools, runCommand]
const READ_ONLY = new Set(['read_file', 'list_directory', 'find_files', 'search_text', 'session_list', 'session_changes'])

const INSTRUCTIONS = `Every tool of this server acts inside an isolated session: a git clone of the user's project in a container of its own. The user's own files are never touched; session_export brings the session's work home as a branch of the project. Paths are relative to the session's workspace folder. A tool called without a session id uses this connection's default session, opened on first use; session_open opens more.`

/** A tool's input schema as JSON Schema, `required` always present. */
function inputSchema(schema) {
  const json = z.toJSONSchema(schema, { io: 'input' })
  delete json.$schema
  return { ...json, required: json.required ?? [] }
}

/** Zod's issues as one line: where, and what is wrong. */
function describeIssues(error) {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`).join('; ')
}

/**
 * The MCP server with the tools registered; `context` (sessions, workspaces, runtime,
 * keep) is what every tool gets, with the request's `extra` added per call.
 */
function createServer() {
  const server = new Server({ name: 'container-isolation', version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS })
  const byName = new Map(TOOLS.map((t) => [t.name, t]))
  const listing = TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: inputSchema(t.schema),
    annotations: { readOnlyHint: READ_ONLY.has(t.name), destructiveHint: t.name === 'session_close', openWorldHint: false },
  }))
  /** @type {Record<string, unknown> | undefined} */
  let context
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params
    const tool = byName.get(name)
    if (!tool) return failure(invalid(`unknown tool '${name}'; this server's tools are ${TOOLS.map((t) => t.name).join(', ')}`))
    const parsed = tool.schema.safeParse(args ?? {})
    if (!parsed.success) return failure(invalid(`${name}: ${describeIssues(parsed.error)}`))
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
