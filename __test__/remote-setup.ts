// vitest.remote.config.ts's global set-up: starts the remote-engine rig once for the run and
// hands its endpoints to the workers through the environment they inherit (helpers.ts picks
// the one of its project's transport); removes the rig, and fails the run if anything of it
// is left, at the end. Each project may call it: the first starts the rig, the last stops it.
import { RemoteEngine } from '../scripts/remote-engine.mjs'

type Shared = { rig: Promise<RemoteEngine>; users: number }
const holder = globalThis as { __remoteRig?: Shared }

export default async function setup(): Promise<() => Promise<void>> {
  const shared = (holder.__remoteRig ??= { rig: new RemoteEngine().start(), users: 0 })
  shared.users++
  const rig = await shared.rig
  Object.assign(process.env, {
    TEST_REMOTE_TLS_HOST: rig.tcpHost,
    TEST_REMOTE_SSH_HOST: rig.sshHost,
    TEST_ENGINE_TCP_HOST: rig.tcpHost,
    TEST_ENGINE_TLS_CA: rig.tls.ca,
    TEST_ENGINE_TLS_CERT: rig.tls.cert,
    TEST_ENGINE_TLS_KEY: rig.tls.key,
    TEST_ENGINE_SSH_KEY: rig.ssh.keyFile,
    TEST_ENGINE_SSH_KNOWN_HOSTS: rig.ssh.knownHostsFile,
  })
  if (shared.users === 1) console.log(`[remote] rig ${rig.netns}: tls via ${rig.tcpHost}, ssh via ${rig.sshHost}`)
  return async () => {
    if (--shared.users > 0) return
    holder.__remoteRig = undefined
    await rig.cleanup()
  }
}
