// Small process and system helpers for the test cluster's rig (scripts/kube-cluster.mjs).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Runs a command without a shell; its stdout as text; throws with its stderr on failure. */
export const quiet = (cmd, args, opts = {}) => {
  try {
    return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...opts })
  } catch (err) {
    const stderr = err.stderr?.toString().trim()
    if (stderr) err.message = `${cmd} ${args.join(' ')}: ${stderr}`
    throw err
  }
}

export const ip = (...args) => quiet('ip', args)

export const attempt = (fn) => {
  try {
    return fn()
  } catch {
    return undefined
  }
}

/** The pid's start time (clock ticks since boot), to tell it from a later process of the same pid. */
export function startTime(pid) {
  const stat = attempt(() => readFileSync(`/proc/${pid}/stat`, 'utf8'))
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
}

/** Whether `proc` ({ pid, start }) is still the process it was, and not a zombie waiting to be reaped. */
export function alive(proc) {
  if (!proc?.pid) return false
  const stat = attempt(() => readFileSync(`/proc/${proc.pid}/stat`, 'utf8'))
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ')
  return fields !== undefined && fields[19] === proc.start && fields[0] !== 'Z'
}

/** Pids of every process whose pid namespace is `nsLink` (e.g. `pid:[4026532…]`). */
export function processesIn(nsLink) {
  const pids = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    if (attempt(() => readlinkSync(`/proc/${entry}/ns/pid`)) === nsLink) pids.push(Number(entry))
  }
  return pids
}
