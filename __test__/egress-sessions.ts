// The egress suites' sessions: a Workspaces on the Debian image in a base directory of its
// own, sessions made from fresh git projects under a given egress, a command's exit code and
// text, and the clean-up that destroys them and removes every directory made.
import { addon, engine, gitProject, IMAGES, tempDir } from './helpers'

export type Egress = Parameters<InstanceType<typeof addon.Workspaces>['setEgress']>[1]

export function egressSessions(name: string) {
  const base = tempDir(`${name}-base`)
  const dirs: Array<{ cleanup: () => void }> = [base]
  const workspaces = new addon.Workspaces({ baseDir: base.path, engine, image: IMAGES.debian })
  let n = 0
  /** A session on its own project under `egress`; `extra` goes to `create`. */
  async function session(egress: Egress, image: string = IMAGES.debian, extra = {}): Promise<string> {
    const project = gitProject(`${name}-project`)
    dirs.push(project)
    const id = `${name.replace(/[^a-z]/g, '')}${process.pid}x${++n}`
    await workspaces.create({ projectDir: project.path, sessionId: id, lifetime: 'process', egress, image, ...extra })
    return id
  }
  async function run(id: string, command: string): Promise<{ exitCode: number; text: string }> {
    const env = await workspaces.environment(id, 'egress')
    const r = await env.shell.execute(command, { toolRequestId: `t${++n}` })
    return { exitCode: r.exitCode, text: r.output.map((l) => l.text).join('\n') }
  }
  async function cleanup(): Promise<void> {
    for (const ws of await workspaces.list()) await workspaces.destroy(ws.sessionId).catch(() => {})
    dirs.forEach((d) => d.cleanup())
  }
  return { base, dirs, workspaces, session, run, cleanup }
}
