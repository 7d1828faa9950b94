// What the reference CLI read from a corpus entry (expected.json) against what our
// readDevcontainerConfig returns, field by field, in our shape: one `{ field, expected,
// actual }` for each field that differs.
import { posix } from 'node:path'
import { isDeepStrictEqual } from 'node:util'

/** Tool-specific reference fields: not compared. */
export const NOT_COMPARED = new Set(['customizations'])

/** Compared as they are (absent and undefined alike). */
const BEHAVIOUR = ['overrideCommand', 'shutdownAction', 'init', 'waitFor', 'userEnvProbe', 'updateRemoteUserUID']

/** Honoured by the reference, not by us: our read must carry a warning naming the field. */
const WARNED = ['portsAttributes', 'otherPortsAttributes']

/** `"4gb"`, `"512mb"`, a number: bytes (powers of 1024), as sizes of `hostRequirements`. */
function bytes(size) {
  if (typeof size === 'number') return size
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*$/i.exec(String(size))
  if (!m) return undefined
  return Math.floor(Number(m[1]) * 1024 ** ' kmgt'.indexOf(m[2].toLowerCase() || ' '))
}

/** `hostRequirements` in our shape: sizes in bytes, `gpu: false` left out. */
function hostRequirements(req) {
  if (req === undefined || req === null) return undefined
  const out = {}
  if (Number.isInteger(req.cpus) && req.cpus >= 0) out.cpus = req.cpus
  for (const key of ['memory', 'storage']) if (req[key] !== undefined && bytes(req[key]) !== undefined) out[key] = bytes(req[key])
  if (req.gpu !== undefined && req.gpu !== null && req.gpu !== false) out.gpu = req.gpu
  return out
}

/** `forwardPorts` then `appPort` as the container ports a session serves (docs/api.md). */
function ports(conf) {
  const list = (v) => (v === undefined || v === null ? [] : [v].flat())
  const port = (t) => (/^\d+$/.test(String(t)) && Number(t) > 0 && Number(t) < 65536 ? Number(t) : undefined)
  const out = []
  for (const entry of list(conf.forwardPorts)) {
    const [host, p] = typeof entry === 'string' && entry.includes(':') ? [entry.slice(0, entry.lastIndexOf(':')), entry.slice(entry.lastIndexOf(':') + 1)] : ['localhost', entry]
    if (['localhost', '127.0.0.1'].includes(host) && port(p)) out.push({ containerPort: port(p), field: 'forwardPorts' })
  }
  for (const entry of list(conf.appPort)) {
    const parts = String(entry).split(':')
    const [h, c] = parts.length === 1 ? [parts[0], parts[0]] : parts.slice(-2)
    if (parts.length <= 3 && port(h) && port(c)) out.push({ containerPort: port(c), hostPort: port(h), field: 'appPort' })
  }
  return out
}

const LIFECYCLE = [
  'initializeCommand',
  'onCreateCommand',
  'updateContentCommand',
  'postCreateCommand',
  'postStartCommand',
  'postAttachCommand',
]

const PLAIN = ['name', 'image', 'containerUser', 'remoteUser', 'service']
const CONFIG_DIR = '${localWorkspaceFolder}/.devcontainer'

/** `type=bind,source=a,target=b,readonly` or `{ type, source, target }` in our shape. */
function mount(spec) {
  if (spec && typeof spec === 'object') {
    return { type: spec.type ?? 'volume', source: spec.source ?? '', target: spec.target, readonly: false }
  }
  const out = { type: 'volume', source: '', target: undefined, readonly: false }
  for (const part of spec.split(',')) {
    const [key, value] = part.includes('=') ? [part.slice(0, part.indexOf('=')), part.slice(part.indexOf('=') + 1)] : [part, '']
    if (key === 'type') out.type = value
    else if (key === 'source' || key === 'src') out.source = value
    else if (key === 'target' || key === 'destination' || key === 'dst') out.target = value
    else if (key === 'readonly' || key === 'ro') out.readonly = value !== 'false' && value !== '0'
  }
  return out
}

function build(conf) {
  const b = conf.build ?? {}
  const dockerfile = b.dockerfile ?? conf.dockerFile
  if (!dockerfile) return undefined
  const file = posix.normalize(posix.join(CONFIG_DIR, dockerfile))
  const context = b.context ?? conf.context
  const out = {
    dockerfile: file,
    context: context === undefined ? posix.dirname(file) : posix.normalize(posix.join(CONFIG_DIR, context)).replace(/\/$/, ''),
    args: b.args ?? {},
  }
  if (b.target !== undefined) out.target = b.target
  return out
}

/** The reference's reading, in our shape (only the fields we compare). */
export function expectedShape(expected) {
  const conf = expected.configuration
  const out = {}
  for (const key of PLAIN) out[key] = conf[key]
  out.build = build(conf)
  out.containerEnv = conf.containerEnv ?? {}
  out.remoteEnv = conf.remoteEnv ?? {}
  out.mounts = (conf.mounts ?? []).map(mount)
  out.workspaceMount = conf.workspaceMount ? mount(conf.workspaceMount) : undefined
  out.workspaceFolder = expected.workspace.workspaceFolder
  out.runArgs = conf.runArgs ?? []
  out.privileged = conf.privileged ?? false
  out.capAdd = conf.capAdd ?? []
  out.securityOpt = conf.securityOpt ?? []
  for (const key of LIFECYCLE) out[key] = conf[key]
  const compose = conf.dockerComposeFile
  out.dockerComposeFile = compose === undefined ? undefined : [compose].flat()
  out.runServices = compose === undefined ? undefined : (conf.runServices ?? [])
  if (compose === undefined) out.service = undefined
  out.features = features(conf.features)
  out.overrideFeatureInstallOrder = conf.overrideFeatureInstallOrder ?? []
  for (const key of BEHAVIOUR) out[key] = conf[key]
  out.ports = ports(conf)
  out.hostRequirements = hostRequirements(conf.hostRequirements)
  return out
}

/** `features` as an object of reference → options in our shape: a version string is
 * `{ version }`, `true` is `{}`, `false` leaves the feature out. */
function features(written) {
  const out = {}
  for (const [reference, value] of Object.entries(written ?? {})) {
    if (value === false) continue
    out[reference] = typeof value === 'string' ? { version: value } : value === true ? {} : value
  }
  return out
}

/** Ours, trimmed to the same fields (paths in `build` made relative like the reference's). */
export function actualShape(ours) {
  const out = {}
  for (const key of [...PLAIN, 'containerEnv', 'remoteEnv', 'mounts', 'workspaceMount', 'workspaceFolder']) out[key] = ours[key]
  for (const key of ['runArgs', 'privileged', 'capAdd', 'securityOpt', ...LIFECYCLE, 'dockerComposeFile', 'runServices']) {
    out[key] = ours[key]
  }
  out.features = Object.fromEntries((ours.features ?? []).map((f) => [f.reference, f.options]))
  out.overrideFeatureInstallOrder = ours.overrideFeatureInstallOrder ?? []
  for (const key of BEHAVIOUR) out[key] = ours[key] ?? undefined
  out.hostRequirements = ours.hostRequirements ?? undefined
  out.ports = (ours.ports ?? []).map(({ containerPort, hostPort, field }) =>
    hostPort === undefined || hostPort === null ? { containerPort, field } : { containerPort, hostPort, field })
  if (ours.build) {
    const { dockerfile, context, args, target } = ours.build
    out.build = { dockerfile, context, args }
    if (target !== undefined) out.build.target = target
  }
  return out
}

/** Every difference between the reference's reading and ours. */
export function differences(expected, ours) {
  if (expected.error || ours.error) {
    const same = Boolean(expected.error) === Boolean(ours.error)
    return same ? [] : [{ field: 'read', expected: expected.error ?? 'read', actual: ours.error ?? 'read' }]
  }
  const conf = expected.configuration
  const want = expectedShape(expected)
  const got = actualShape(ours)
  const out = []
  for (const field of Object.keys(want)) {
    if (isDeepStrictEqual(clean(want[field]), clean(got[field]))) continue
    const name = field === 'workspaceFolder' && conf.workspaceFolder === undefined ? 'workspaceFolder (default)' : field
    out.push({ field: name, expected: want[field], actual: got[field] })
  }
  for (const key of WARNED) {
    if (conf[key] !== undefined && !ours.warnings.some((w) => w.startsWith(`${key} `))) {
      out.push({ field: key, expected: 'a warning', actual: ours.warnings })
    }
  }
  for (const key of ['options', 'cacheFrom']) {
    if (conf.build?.[key] !== undefined && !ours.warnings.some((w) => w.startsWith(`build.${key} `))) {
      out.push({ field: `build.${key}`, expected: 'a warning', actual: ours.warnings })
    }
  }
  const known = new Set([...PLAIN, ...Object.keys(want), ...WARNED, ...NOT_COMPARED, 'dockerFile', 'context', 'configFilePath', 'forwardPorts', 'appPort'])
  // Anything else must at least be warned about (an unknown property is).
  for (const key of Object.keys(conf)) {
    if (known.has(key) || ours.warnings.some((w) => w.startsWith(`${key} `))) continue
    out.push({ field: key, expected: conf[key], actual: 'neither compared nor warned about' })
  }
  return out
}

/** undefined and absent alike; JSON round trip drops undefined members. */
function clean(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value))
}
