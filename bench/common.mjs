// Shared by the benchmarks: timing with warm-up, medians, the docker CLI, a table printer.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'

export const DOCKER = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker'
export const run = promisify(execFile)
export const N = Number(process.env.BENCH_N ?? 30)

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** Median milliseconds of `n` runs of `fn(i)`, after three warm-up runs. */
export async function time(fn, n = N) {
  const samples = []
  for (let i = 0; i < 3; i++) await fn(-1 - i)
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint()
    await fn(i)
    samples.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  return median(samples)
}

/** Rows of [name, baseline ms, ours ms]; prints the speed-up of ours. */
export function table(title, rows, [baseline, ours] = ['seeds', 'ours']) {
  console.log(title)
  console.log('operation'.padEnd(34), baseline.padStart(9), ours.padStart(9), 'speed-up'.padStart(10))
  for (const [name, seeds, ours] of rows) {
    const fmt = (ms) => (ms < 1 ? ms.toFixed(3) : ms.toFixed(1)).padStart(9)
    console.log(name.padEnd(34), fmt(seeds), fmt(ours), `${(seeds / ours).toFixed(1)}x`.padStart(10))
  }
}
