// Types of scripts/remote-engine.mjs (the remote-engine rig), for the TypeScript suites.
export declare const TEST_IMAGES: string[]

export declare class RemoteEngine {
  readonly dir: string
  readonly netns: string
  readonly hostIf: string
  readonly address: { host: string; ns: string }
  /** The engine's unix socket, visible on this machine (the rig's own checks). */
  readonly socketPath: string
  /** `tcp://<ns ip>:2376`, TLS with client certificates required. */
  readonly tcpHost: string
  /** The client's TLS material (PEM files). */
  readonly tls: { ca: string; cert: string; key: string }
  /** A directory in DOCKER_CERT_PATH's layout: ca.pem, cert.pem, key.pem. */
  readonly certPath: string
  /** A CA that did not sign the server's certificate. */
  readonly wrongCa: string
  /** `ssh://root@<ns ip>`. */
  readonly sshHost: string
  readonly ssh: { keyFile: string; knownHostsFile: string }
  /** The engine's data root as this machine sees it: an empty directory. */
  readonly hostSideDataRoot: string
  start(opts?: { images?: string[] }): Promise<this>
  /** The docker CLI over TLS; its trimmed stdout. */
  cli(...args: string[]): string
  cliArgs(): string[]
  /** A command on the rig "machine" over ssh; its trimmed stdout. */
  sshRun(...command: string[]): string
  loadImages(images: string[]): void
  /** DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH for the rig over TLS. */
  dockerEnv(): Record<string, string>
  logTail(file: string, lines?: number): string
  cleanup(): Promise<void>
}
