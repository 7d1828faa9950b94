// The MCP stdio transport (newline-delimited JSON-RPC on stdin/stdout), as the SDK's
// StdioServerTransport, with what a server taking whole files needs: a message is
// gathered in chunks and joined once (not copied per chunk), up to 64 MiB; a larger one
// is skipped to its end and answered as an error, when its id can be found, instead of
// closing the connection. Every line is screened first (`jsonrpc-gate.js`): what is not a
// well-formed message is answered with the JSON-RPC error it calls for.
'use strict'

const { failure, ToolError } = require('./results.js')
const { screen, idIn } = require('./jsonrpc-gate.js')

const MAX_MESSAGE_BYTES = 64 * 1024 * 1024
/** Bytes kept of each end of an oversized message, to find its id and method. */
const KEEP = 512

class LineTransport {
  /**
   * @param {NodeJS.ReadableStream} input
   * @param {NodeJS.WritableStream} output
   * @param {number} maxMessageBytes
   */
  constructor(input = process.stdin, output = process.stdout, maxMessageBytes = MAX_MESSAGE_BYTES) {
    this.input = input
    this.output = output
    this.max = maxMessageBytes
    this.chunks = []
    this.size = 0
    this.oversized = undefined
    this.onData = (chunk) => this.take(chunk)
    this.onError = (err) => this.onerror?.(err)
  }

  async start() {
    this.input.on('data', this.onData)
    this.input.on('error', this.onError)
  }

  take(chunk) {
    for (let from = 0; from < chunk.length; ) {
      const newline = chunk.indexOf(10, from)
      const part = chunk.subarray(from, newline === -1 ? chunk.length : newline)
      if (this.oversized) this.oversized.tail = Buffer.concat([this.oversized.tail, part]).subarray(-KEEP)
      else if (this.size + part.length > this.max) {
        const whole = Buffer.concat([...this.chunks, part])
        this.oversized = { head: whole.subarray(0, KEEP), tail: whole.subarray(-KEEP) }
        this.chunks = []
        this.size = 0
      } else if (part.length) {
        this.chunks.push(part)
        this.size += part.length
      }
      if (newline === -1) return
      this.endOfLine()
      from = newline + 1
    }
  }

  endOfLine() {
    if (this.oversized) {
      const { head, tail } = this.oversized
      this.oversized = undefined
      this.refuse(head.toString('utf8'), tail.toString('utf8'))
      return
    }
    const line = Buffer.concat(this.chunks, this.size).toString('utf8').replace(/\r$/, '')
    this.chunks = []
    this.size = 0
    if (!line.trim()) return
    const { message, answer, report } = screen(line)
    if (answer) {
      this.onerror?.(new Error(`answered ${answer.error.code}: ${answer.error.message}`))
      this.send(answer).catch(() => {})
    } else if (report) this.onerror?.(new Error(report))
    else this.onmessage?.(message)
  }

  /** An answer to a message over the bound: a tool error for a tool call, else a JSON-RPC error. */
  refuse(head, tail) {
    const id = idIn(head, tail)
    const why = `LIMIT_EXCEEDED: a message over ${this.max / 1024 / 1024} MiB was dropped`
    if (id === null) {
      this.onerror?.(new Error(`${why} (no id found to answer)`))
      return
    }
    const method = /"method"\s*:\s*"([^"]*)"/.exec(head)?.[1]
    const answer =
      method === 'tools/call'
        ? { jsonrpc: '2.0', id, result: failure(new ToolError('LIMIT_EXCEEDED', `the request is over ${this.max / 1024 / 1024} MiB and was not read`)) }
        : { jsonrpc: '2.0', id, error: { code: -32600, message: why } }
    this.send(answer).catch(() => {})
  }

  send(message) {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve()
      else this.output.once('drain', resolve)
    })
  }

  async close() {
    this.input.off('data', this.onData)
    this.input.off('error', this.onError)
    this.chunks = []
    this.onclose?.()
  }
}

module.exports = { LineTransport, MAX_MESSAGE_BYTES }
