// The MCP server's tools: listed with their JSON Schemas and annotations, and called with
// arguments checked against them. Every failure — an unknown tool, arguments of the wrong
// type, a library rejection — is a tool result with `isError: true` whose text starts
// with the error's code; nothing a client sends ends the server.
'use strict'

const { Server } = require('@modelcontextprotocol/sdk/server/index.js')
const { CallToolRequestSchema, ListToolsRequestSchema } = require('@modelcontextprotocol/sdk/types.js')
const { z } = require('zod')
const { failure, invalid } = require('./results.js')
const { sessionTools } = require('./session-tools.js')
const { sessionExport } = require('./export-tool.js')
const { fileTools } = require('./file-tools.js')
const { searchTools } = require('./search-tools.js')
const { runCommand } = require('./command-tool.js')
const { version } = require('../../package.json')

const TOOLS = [...sessionTools, sessionExport, ...fileTools, ...searchTools, runCommand]

/** What the server tells the model about all its tools. */
function instructions({ exportPrefix }) {
  return `Every tool of this server acts inside an isolated session: a git clone of the user's project in a container of its own. The user's own files are never touched; session_export brings the session's work home as a new branch under ${exportPrefix} of the project (for a project folder that is not a git repository, of the library's repository of its snapshot, which the user fetches from). Paths are relative to the session's workspace folder. A tool called without a session id uses this connection's default session, opened on first use; session_open opens more.`
}

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
 * The tools as `tools/list` gives them: descriptions and annotations follow the server's
 * settings and, for `forceUsable`, the client's capabilities.
 * @param {{ keep: boolean, egress?: unknown, exportPrefix: string, forceUsable: boolean }} settings
 */
function listing(settings) {
  return TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: typeof t.description === 'function' ? t.description(settings) : t.description,
    inputSchema: inputSchema(t.schema),
    annotations: { title: t.title, ...t.annotations(settings) },
  }))
}

/**
 * The MCP server with the tools registered; `context` (sessions, workspaces, runtime,
 * exportPolicy, keep, egress) is what every tool gets, with the request's `extra` added
 * per call.
 * @param {{ exportPrefix: string }} settings
 */
function createServer(settings) {
  const server = new Server({ name: 'container-isolation', version }, { capabilities: { tools: {} }, instructions: instructions(settings) })
  const byName = new Map(TOOLS.map((t) => [t.name, t]))
  /** @type {Record<string, any> | undefined} */
  let context
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: listing({ keep: Boolean(context?.keep), egress: context?.egress, exportPrefix: settings.exportPrefix, forceUsable: Boolean(context?.exportPolicy?.forceUsable()) }),
  }))
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
