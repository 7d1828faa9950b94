import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OutputLine } from '../index'
import { addon, engine, IMAGES, isPodman, rejection, suiteRuntime, tempDir, timeScale } from './helpers'

const { runtime, cleanup } = suiteRuntime('shell')
const logs = tempDir('shell-logs')
afterAll(async () => {
  await cleanup()
  logs.cleanup()
})

async function container(image: string = IMAGES.debian) {
  const id = await runtime.create({ image, workingDirectory: '/', mounts: [] })
  await runtime.start(id)
  return id
}

function makeShell(containerId: string, extra: Partial<ConstructorParameters<typeof addon.DockerShell>[0]> = {}) {
  return new addon.DockerShell({ container: containerId, cwd: '/tmp', threadId: 'thread-1', logDir: logs.path, engine, ...extra })
}

let requests = 0
const req = () => `req-${++requests}`

async function ps(id: string) {
  return (await runtime.exec(id, { command: ['ps', '-eo', 'args'] })).stdout
}

/** Waits (5 s at most) until none of `names` runs in the container: a KILL sent from inside
 * the container over a remote engine lands after the call that sent it has answered. */
async function noneLeft(id: string, names: string[]) {
  await expect.poll(async () => {
    const left = await ps(id)
    return names.filter((n) => left.includes(n))
  }, { timeout: 5000, interval: 250 }).toEqual([])
}

// Every case on both paths: through the session agent (the default) and through engine
// execs (where the agent cannot run).
for (const agent of [true, false]) {
  const label = agent ? ' (agent)' : ' (engine exec)'
  const shell = (containerId: string, extra: Partial<ConstructorParameters<typeof addon.DockerShell>[0]> = {}) =>
    makeShell(containerId, { agent, ...extra })

  describe(`DockerShell.execute${label}`, () => {
    let id = ''
    beforeAll(async () => {
      id = await container()
    })

    it('reports exit codes and runs in cwd', async () => {
      const sh = shell(id, { cwd: '/usr' })
      expect((await sh.execute('true', { toolRequestId: req() })).exitCode).toBe(0)
      const r = await sh.execute('pwd; exit 42', { toolRequestId: req() })
      expect(r.exitCode).toBe(42)
      expect(r.signal).toBeUndefined()
      expect(r.output).toEqual([{ stream: 'stdout', text: '/usr' }])
      expect(r.durationMs).toBeGreaterThanOrEqual(0)
    })

    it('passes env and user, with stdin closed', async () => {
      const sh = shell(id, { env: { GREETING: 'hi there' }, user: 'agent' })
      const r = await sh.execute('echo "$GREETING"; id -un; cat; echo "stdin:$?"', { toolRequestId: req() })
      expect(r.output.map((l) => l.text)).toEqual(['hi there', 'agent', 'stdin:0'])
    })

    it('delivers lines as they arrive, not at the end', async () => {
      const arrivals: Array<[string, number]> = []
      let started = 0
      const r = await shell(id).execute('echo a; sleep 1; echo b', {
        toolRequestId: req(),
        onStart: () => (started = Date.now()),
        onOutput: (line) => arrivals.push([line.text, Date.now()]),
      })
      const resolvedAt = Date.now()
      expect(started).toBeGreaterThan(0)
      expect(arrivals.map(([t]) => t)).toEqual(['a', 'b'])
      expect(resolvedAt - arrivals[0][1]).toBeGreaterThanOrEqual(800)
      expect(r.output.map((l) => l.text)).toEqual(['a', 'b'])
    })

    // The delivery is the binding's, the same on both paths and engines: run once, on dockerd
    // (its slow host is a busy loop: 18 s of a core).
    if (agent && !isPodman) it('onOutput has seen every line when execute settles, however slow it is: 606,062 lines (60 MB), the last one included', async () => {
      const seen: string[] = []
      let count = 0
      let last = ''
      const r = await shell(id).execute("yes 'a line of output that is one hundred bytes long, padded out with dots ..........................' | head -n 606061; echo END-OF-MANY", {
        toolRequestId: req(),
        onOutput: (line) => {
          if (count < 3) seen.push(line.text)
          count++
          last = line.text
          // A host slower than the command: the lines queue up behind it.
          const until = count % 100 === 0 ? Date.now() + 3 : 0
          while (Date.now() < until);
        },
      })
      expect(r.exitCode).toBe(0)
      expect(r.omittedLines + r.output.length).toBe(606062)
      expect({ count, last }).toEqual({ count: 606062, last: 'END-OF-MANY' })
      expect(seen).toHaveLength(3)
    }, 240_000)

    it('joins a line written in two halves and a character split across writes', async () => {
      const lines: OutputLine[] = []
      await shell(id).execute("printf 'hel'; sleep 0.2; printf 'lo\\n'; printf '\\xc3'; sleep 0.2; printf '\\xa9t\\xe2\\x82'; sleep 0.2; printf '\\xac\\n'", {
        toolRequestId: req(),
        onOutput: (l) => lines.push(l),
      })
      expect(lines).toEqual([
        { stream: 'stdout', text: 'hello' },
        { stream: 'stdout', text: 'ét€' },
      ])
    })

    it('strips ANSI colours, drops blank lines, replaces invalid UTF-8, tags streams', async () => {
      const r = await shell(id).execute(
        "printf '\\033[1;31mred\\033[0m\\n\\n\\n'; sleep 0.1; echo oops >&2; sleep 0.1; printf 'bad\\xffbyte\\n'",
        { toolRequestId: req() },
      )
      expect(r.output).toEqual([
        { stream: 'stdout', text: 'red' },
        { stream: 'stderr', text: 'oops' },
        { stream: 'stdout', text: 'bad\uFFFDbyte' },
      ])
    })

    it('writes the log file in the contract format and place', async () => {
      const tool = req()
      // stdout and stderr are separate pipes: pauses make their order deterministic.
      const command = 'echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three; exit 3'
      const r = await shell(id).execute(command, { toolRequestId: tool })
      expect(r.logFilePath).toBe(`${logs.path}/threads/thread-1/tools/${tool}/bashCommand.log`)
      expect(readFileSync(r.logFilePath!, 'utf8')).toBe(
        `$ ${command}\nstdout:\none\nstderr:\ntwo\nstdout:\nthree\nexit code 3\n`,
      )
    })

    it('works on the busybox image, which has no bash', async () => {
      const bb = await container(IMAGES.busybox)
      const r = await shell(bb).execute('echo "$0"; ls /bin/bash 2>/dev/null || echo nobash', { toolRequestId: req() })
      expect(r.output.map((l) => l.text)).toEqual(['/bin/sh', 'nobash'])
    })

    it('runs an argv as given, with no shell in between', async () => {
      const r = await shell(id).execute(['printf', '%s|', 'a b', '$(id)', '; echo x'], { toolRequestId: req() })
      expect(r.output).toEqual([{ stream: 'stdout', text: 'a b|$(id)|; echo x|' }])
      expect(readFileSync(r.logFilePath!, 'utf8').split('\n')[0]).toBe('$ printf %s| a b $(id) ; echo x')
      expect((await rejection(shell(id).execute([], { toolRequestId: req() }))).code).toBe('INVALID_ARGUMENT')
    })

    it('honours an explicit shell', async () => {
      const r = await shell(id, { shell: ['/bin/sh', '-c'] }).execute('echo "$0"', { toolRequestId: req() })
      expect(r.output[0].text).toBe('/bin/sh')
    })

    it('rejects bad ids, empty commands and missing or stopped containers with codes', async () => {
      expect((await rejection(shell(id).execute('true', { toolRequestId: '../x' }))).code).toBe('INVALID_ARGUMENT')
      expect((await rejection(shell(id).execute('  ', { toolRequestId: req() }))).code).toBe('INVALID_ARGUMENT')
      expect(() => shell(id, { threadId: 'a/b' })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
      expect(() => shell(id, { cwd: 'relative' })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
      const missing = await rejection(shell('no-such-container-y').execute('true', { toolRequestId: req() }))
      expect(missing.code).toBe('CONTAINER_NOT_FOUND')
      const stopped = await container()
      await runtime.stop(stopped)
      const err = await rejection(shell(stopped).execute('true', { toolRequestId: req() }))
      expect(err.code).toBe('CONTAINER_NOT_RUNNING')
      expect(err.message).toContain(stopped)
    })
  })

  describe(`DockerShell termination${label}`, () => {
    let id = ''
    beforeAll(async () => {
      id = await container()
    })

    it('terminate() ends the whole tree within 2 s (on a quiet local engine) and resolves with the signal', async () => {
      const sh = shell(id)
      const started = Date.now()
      const pending = sh.execute('sleep 300 & sleep 301; wait', { toolRequestId: req(), onStart: () => setTimeout(() => sh.terminate(), 300) })
      const r = await pending
      expect(Date.now() - started).toBeLessThan(2000 * timeScale)
      expect(r.signal).toBe('SIGTERM')
      expect(r.exitCode).not.toBe(0)
      await noneLeft(id, ['sleep 300', 'sleep 301'])
      expect(readFileSync(r.logFilePath!, 'utf8').trimEnd().split('\n').pop()).toBe('terminated by signal SIGTERM')
    })

    it('a command that traps SIGTERM is SIGKILLed after about 1 s', async () => {
      const sh = shell(id)
      let termAt = 0
      const r = await sh.execute("trap '' TERM; sleep 302 & sleep 303; wait", {
        toolRequestId: req(),
        onStart: () =>
          setTimeout(() => {
            termAt = Date.now()
            sh.terminate()
          }, 300),
      })
      const elapsed = Date.now() - termAt
      expect(r.signal).toBe('SIGKILL')
      expect(elapsed).toBeGreaterThanOrEqual(900)
      expect(elapsed).toBeLessThan(2500 * timeScale)
      await noneLeft(id, ['sleep 302', 'sleep 303'])
    })

    it('kills children that left the process group and closed their output', async () => {
      const sh = shell(id)
      const r = await sh.execute("setsid bash -c \"trap '' TERM; exec sleep 304\" >/dev/null 2>&1 & sleep 305", {
        toolRequestId: req(),
        onStart: () => setTimeout(() => sh.terminate(), 300),
      })
      expect(r.signal).toBeDefined()
      await noneLeft(id, ['sleep 304', 'sleep 305'])
    })

    it('timeoutMs kills the tree, reports non-zero and says so on stderr', async () => {
      // Long enough for the command to have printed before it is killed, wherever it runs.
      const timeoutMs = 500 * timeScale
      const sh = shell(id, { timeoutMs })
      const started = Date.now()
      const r = await sh.execute('echo before; sleep 306 & sleep 307; wait', { toolRequestId: req() })
      expect(Date.now() - started).toBeLessThan(2000 * timeScale)
      expect(r.exitCode).not.toBe(0)
      expect(r.output[0]).toEqual({ stream: 'stdout', text: 'before' })
      expect(r.output.at(-1)).toEqual({ stream: 'stderr', text: `Command timed out after ${timeoutMs} ms and was terminated` })
      await noneLeft(id, ['sleep 306', 'sleep 307'])
    })

    it('timeoutMs SIGKILLs a command that traps SIGTERM', async () => {
      const sh = shell(id, { timeoutMs: 300 })
      const started = Date.now()
      const r = await sh.execute("trap '' TERM; sleep 308", { toolRequestId: req() })
      const elapsed = Date.now() - started
      expect(elapsed).toBeGreaterThanOrEqual(1200)
      expect(elapsed).toBeLessThan(3000 * timeScale)
      expect(r.exitCode).not.toBe(0)
      await noneLeft(id, ['sleep 308'])
    })

    it('terminate() with nothing running is a no-op, and the next command runs normally', async () => {
      const sh = shell(id)
      sh.terminate()
      const r = await sh.execute('echo fine', { toolRequestId: req() })
      expect(r.output[0].text).toBe('fine')
      expect(r.signal).toBeUndefined()
    })
  })

  describe(`DockerShell concurrency${label}`, () => {
    it('8 shells on one container and 8 on different containers run at once, unmixed', async () => {
      const shared = await container()
      const own = await Promise.all(Array.from({ length: 8 }, () => container()))
      const shells = [
        ...Array.from({ length: 8 }, (_, i) => ({ sh: shell(shared, { threadId: `shared-${i}` }), tag: `s${i}` })),
        ...own.map((c, i) => ({ sh: shell(c, { threadId: `own-${i}` }), tag: `o${i}` })),
      ]
      const results = await Promise.all(
        shells.map(({ sh, tag }) =>
          sh.execute(`for n in 1 2 3 4 5; do echo ${tag}-$n; echo ${tag}-err-$n >&2; sleep 0.05; done`, { toolRequestId: req() }),
        ),
      )
      results.forEach((r, i) => {
        const tag = shells[i].tag
        expect(r.exitCode).toBe(0)
        expect(r.output.filter((l) => l.stream === 'stdout').map((l) => l.text)).toEqual([1, 2, 3, 4, 5].map((n) => `${tag}-${n}`))
        expect(r.output.filter((l) => l.stream === 'stderr').map((l) => l.text)).toEqual([1, 2, 3, 4, 5].map((n) => `${tag}-err-${n}`))
      })
    })

    it('one shell runs its commands one at a time', async () => {
      const sh = shell(await container())
      const span = 'date +%s%3N; sleep 0.3; date +%s%3N'
      const [a, b] = await Promise.all([
        sh.execute(span, { toolRequestId: req() }),
        sh.execute(span, { toolRequestId: req() }),
      ])
      const [a0, a1] = a.output.map((l) => Number(l.text))
      const [b0, b1] = b.output.map((l) => Number(l.text))
      expect(a1 <= b0 || b1 <= a0).toBe(true)
    })
  })
}
