// What the reference compose reader read from a corpus entry (expected-compose.json) against
// what our readComposeProject plans, field by field, in a shape both share: one
// `{ field, expected, actual }` for each field that differs.
import { posix } from 'node:path'
import { isDeepStrictEqual } from 'node:util'

/** `docker compose config` writes a `$` of a value as `$$` (so that its output reads back). */
const unescape = (value) => (typeof value === 'string' ? value.split('$$').join('$') : value)

/** A Go duration (`1m30s`, `500ms`) in milliseconds. */
function ms(duration) {
  if (duration === undefined || duration === null) return undefined
  const unit = { h: 3600000, m: 60000, s: 1000, ms: 1, us: 0.001, 'µs': 0.001, ns: 0.000001 }
  let total = 0
  for (const [, n, u] of String(duration).matchAll(/(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g)) total += Number(n) * unit[u]
  return Math.round(total)
}

const strings = (map) =>
  Object.fromEntries(Object.entries(map ?? {}).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, unescape(String(v))]))

const sortBy = (list, key) => [...list].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))

/** A service of the reference's reading, in the shared shape. */
function referenceService(s) {
  const ports = [
    ...(s.ports ?? []).map((p) => ({ containerPort: Number(p.target), protocol: p.protocol ?? 'tcp' })),
    ...(s.expose ?? []).flatMap((e) => {
      const [range, protocol = 'tcp'] = String(e).split('/')
      const [from, to = from] = range.split('-').map(Number)
      return Array.from({ length: to - from + 1 }, (_, i) => ({ containerPort: from + i, protocol }))
    }),
  ]
  const check = s.healthcheck
  return {
    image: s.image,
    build: s.build && {
      context: s.build.context,
      dockerfile: posix.join(s.build.context, s.build.dockerfile ?? 'Dockerfile'),
      args: strings(s.build.args),
      target: s.build.target,
    },
    environment: strings(s.environment),
    command: s.command?.map(unescape) ?? undefined,
    entrypoint: s.entrypoint?.map(unescape) ?? undefined,
    user: s.user,
    workingDir: s.working_dir,
    ports: unique(ports),
    dependsOn: sortBy(Object.entries(s.depends_on ?? {}).map(([service, d]) => ({ service, condition: d.condition })), (d) => d.service),
    volumes: (s.volumes ?? []).map((v) => ({ type: v.type, source: v.source ?? '', target: v.target })),
    healthcheck: check && {
      test: check.disable ? ['NONE'] : check.test?.map(unescape),
      intervalMs: ms(check.interval),
      timeoutMs: ms(check.timeout),
      retries: check.retries,
      startPeriodMs: ms(check.start_period),
    },
  }
}

function unique(ports) {
  const seen = new Set()
  return sortBy(
    ports.filter((p) => !seen.has(`${p.containerPort}/${p.protocol}`) && seen.add(`${p.containerPort}/${p.protocol}`)),
    (p) => `${String(p.containerPort).padStart(5, '0')}/${p.protocol}`,
  )
}

/** A service of ours, in the shared shape. */
function ourService(s) {
  return {
    image: s.image ?? undefined,
    build: s.build && { context: s.build.context, dockerfile: s.build.dockerfile, args: s.build.args, target: s.build.target ?? undefined },
    environment: s.environment,
    command: s.command ?? undefined,
    entrypoint: s.entrypoint ?? undefined,
    user: s.user ?? undefined,
    workingDir: s.workingDir ?? undefined,
    ports: unique(s.ports.map((p) => ({ containerPort: p.containerPort, protocol: p.protocol }))),
    dependsOn: sortBy(s.dependsOn.map((d) => ({ service: d.service, condition: d.condition })), (d) => d.service),
    volumes: s.mounts.map((m) => ({ type: m.type, source: m.source, target: m.target })),
    healthcheck: s.healthcheck && {
      test: s.healthcheck.test,
      intervalMs: s.healthcheck.intervalMs ?? undefined,
      timeoutMs: s.healthcheck.timeoutMs ?? undefined,
      retries: s.healthcheck.retries ?? undefined,
      startPeriodMs: s.healthcheck.startPeriodMs ?? undefined,
    },
  }
}

/** undefined and absent alike; JSON round trip drops undefined members. */
const clean = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)))

/** Every difference between the reference's reading and ours. */
export function composeDifferences(expected, ours) {
  if (expected.error || ours.error) {
    const same = Boolean(expected.error) === Boolean(ours.error)
    return same ? [] : [{ field: 'read', expected: expected.error ?? 'read', actual: ours.error ?? 'read' }]
  }
  const want = expected.project
  const out = []
  if (want.name !== ours.name) out.push({ field: 'name', expected: want.name, actual: ours.name })
  const wantNames = Object.keys(want.services ?? {}).sort()
  const gotNames = ours.services.map((s) => s.name).sort()
  if (!isDeepStrictEqual(wantNames, gotNames)) out.push({ field: 'services', expected: wantNames, actual: gotNames })
  for (const name of wantNames.filter((n) => gotNames.includes(n))) {
    const w = referenceService(want.services[name])
    const g = ourService(ours.services.find((s) => s.name === name))
    for (const key of Object.keys(w)) {
      if (!isDeepStrictEqual(clean(w[key]), clean(g[key]))) out.push({ field: `services.${key}`, service: name, expected: w[key], actual: g[key] })
    }
  }
  return out
}
