// vitest.remote.config.ts's global set-up: starts the remote-engine rig once for the run and
// hands its endpoints to the workers through the environment they inherit (helpers.ts reads
// them); removes the rig, and fails the run if anything of it is left, at the end.
import { RemoteEngine } from '../scripts/remote-engine.mjs'

export default async function setup(): Promise<() => Promise<void>> {
  const transport = process.env.TEST_REMOTE_TRANSPORT ?? 'tls'
  if (transport !== 'tls' && transport !== 'ssh') throw new Error(`TEST_REMOTE_TRANSPORT must be tls or ssh, not ${transport}`)
  const rig = await new RemoteEngine().start()
  Object.assign(process.env, {
    TEST_ENGINE_HOST: transport === 'ssh' ? rig.sshHost : rig.tcpHost,
    TEST_ENGINE_TCP_HOST: rig.tcpHost,
    TEST_ENGINE_TLS_CA: rig.tls.ca,
    TEST_ENGINE_TLS_CERT: rig.tls.cert,
    TEST_ENGINE_TLS_KEY: rig.tls.key,
    TEST_ENGINE_SSH_KEY: rig.ssh.keyFile,
    TEST_ENGINE_SSH_KNOWN_HOSTS: rig.ssh.knownHostsFile,
  })
  console.log(`[remote] rig ${rig.netns}: ${transport} via ${process.env.TEST_ENGINE_HOST}`)
  return async () => {
    await rig.cleanup()
  }
}
