// A registry of the pull suite's own that refuses (almost) every manifest, each repository with its
// own answer of the distribution API, as real registries give them: the `/v2/` ping asks for
// a bearer token (anonymous tokens from its own token service), and then
// `ci/unauthorized` answers 401 (UNAUTHORIZED, with a WWW-Authenticate challenge),
// `ci/missing` 404 (MANIFEST_UNKNOWN), `ci/limited` 429 (TOOMANYREQUESTS, `Retry-After: 1`:
// Podman waits what it says before each of its 5 tries, 60 s would hold a pull for minutes)
// and `ci/broken` 500; `ci/garbled` has its manifest (200), bytes no engine can read.
// Its token service hands out tokens to a `GET` (anonymous) and to a
// `POST` of an OAuth refresh token (an identity token). Every request is logged with its
// User-Agent, whether it carried a token it gave out, and the form it posted.
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { listen, tracked } from './test-server'

export interface AnsweredRequest {
  method: string
  path: string
  userAgent: string
  /** Whether it carried a token this registry gave out. */
  bearer: boolean
  /** The form fields of a `POST`. */
  form?: Record<string, string>
}

export interface AnsweringRegistry {
  /** `127.0.0.1:<port>`. */
  host: string
  requests(): AnsweredRequest[]
  stop(): Promise<void>
}

const SERVICE = 'ci-answering-registry'

/** The repositories and what each answers for any of its manifests. */
export const ANSWERS = {
  'ci/unauthorized': { status: 401, code: 'UNAUTHORIZED', message: 'authentication required' },
  'ci/missing': { status: 404, code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' },
  'ci/limited': { status: 429, code: 'TOOMANYREQUESTS', message: 'pull rate limit reached for this test' },
  'ci/broken': { status: 500, code: 'UNKNOWN', message: 'the storage of this test registry is broken' },
} as const

/** The repository whose manifest is there (200) and unreadable. */
export const GARBLED = 'ci/garbled'

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'docker-distribution-api-version': 'registry/2.0',
    ...headers,
  })
  res.end(text)
}

export async function startAnsweringRegistry(): Promise<AnsweringRegistry> {
  const tokens = new Set<string>()
  const log: AnsweredRequest[] = []
  const sockets = new Set<Socket>()
  let host = ''
  const challenge = (scope?: string) =>
    `Bearer realm="http://${host}/token",service="${SERVICE}"${scope ? `,scope="${scope}"` : ''}`
  const unauthorized = (res: ServerResponse, scope?: string) =>
    json(res, 401, { errors: [{ code: 'UNAUTHORIZED', message: 'authentication required', detail: null }] }, { 'www-authenticate': challenge(scope) })

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', `http://${host}`)
    const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? ''
    const bearer = tokens.has(token)
    const entry: AnsweredRequest = { method: req.method ?? '', path: url.pathname, userAgent: req.headers['user-agent'] ?? '', bearer }
    log.push(entry)
    if (req.method === 'POST') {
      let body = ''
      for await (const chunk of req) body += chunk
      entry.form = Object.fromEntries(new URLSearchParams(body))
    }
    if (url.pathname === '/token') {
      const issued = `ci-token-${randomBytes(12).toString('hex')}`
      tokens.add(issued)
      return json(res, 200, { token: issued, access_token: issued, expires_in: 300 })
    }
    if (url.pathname === '/v2/' || url.pathname === '/v2') {
      return bearer ? json(res, 200, {}) : unauthorized(res)
    }
    const manifest = /^\/v2\/(.+)\/manifests\/[^/]+$/.exec(url.pathname)
    const repository = manifest?.[1] ?? ''
    const scope = `repository:${repository}:pull`
    if (!bearer) return unauthorized(res, scope)
    if (repository === GARBLED) {
      const garbage = Buffer.from('this registry stores no manifest here, only these words')
      res.writeHead(200, {
        'content-type': 'application/vnd.oci.image.manifest.v1+json',
        'content-length': garbage.length,
        'docker-content-digest': `sha256:${createHash('sha256').update(garbage).digest('hex')}`,
        'docker-distribution-api-version': 'registry/2.0',
      })
      return void res.end(req.method === 'HEAD' ? undefined : garbage)
    }
    const answer = ANSWERS[repository as keyof typeof ANSWERS]
    if (!answer) return json(res, 404, { errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry' }] })
    const body = { errors: [{ code: answer.code, message: answer.message, detail: null }] }
    const headers: Record<string, string> = {}
    if (answer.status === 401) headers['www-authenticate'] = `${challenge(scope)},error="insufficient_scope"`
    if (answer.status === 429) headers['retry-after'] = '1'
    if (req.method === 'HEAD') {
      res.writeHead(answer.status, { 'docker-distribution-api-version': 'registry/2.0', ...headers })
      return void res.end()
    }
    json(res, answer.status, body, headers)
  })
  server.on('connection', tracked(sockets))
  host = await listen(server)
  return {
    host,
    requests: () => [...log],
    async stop() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
