// What the test cluster is made of: its binaries (scripts/kube-build.sh, cached per version)
// and the offline test images, saved once from the machine's dockerd (only read there).
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { quiet } from './proc.mjs'

const BUILD = fileURLToPath(new URL('../kube-build.sh', import.meta.url))
const MACHINE_DOCKER = ['-H', 'unix:///var/run/docker.sock']
const IMAGE_CACHE = join(process.env.KUBE_CACHE ?? '/var/cache/container-isolation/kube', 'images')
export const TEST_IMAGES = ['container-isolation-test:debian', 'container-isolation-test:busybox', 'container-isolation-test:noshell']

/** Runs kube-build.sh (quick when cached); returns { binDir, cniDir, versions }. */
export function build() {
  const binDir = quiet('bash', [BUILD], { stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()
  const cniDir = join(binDir, '..', 'cni')
  const stamp = (dir, c) => readFileSync(join(dir, `.${c}.stamp`), 'utf8').split(' ')[0]
  const containerd = quiet('containerd', ['--version']).trim().split(' ')[2]
  return { binDir, cniDir, versions: { kubernetes: stamp(binDir, 'kubernetes'), etcd: stamp(binDir, 'etcd'), cniPlugins: stamp(cniDir, 'cni'), containerd } }
}

/**
 * The test images as one `docker save` archive, cached by their image ids (a changed image
 * is saved again; older archives are removed).
 */
export function imageArchive(images) {
  const ids = quiet('docker', [...MACHINE_DOCKER, 'image', 'inspect', '--format', '{{.Id}}', ...images]).trim()
  const key = createHash('sha256').update(`${images.join(' ')}\n${ids}`).digest('hex').slice(0, 16)
  const archive = join(IMAGE_CACHE, `${key}.tar`)
  if (existsSync(archive)) return archive
  mkdirSync(IMAGE_CACHE, { recursive: true })
  for (const old of readdirSync(IMAGE_CACHE)) if (old.endsWith('.tar')) rmSync(join(IMAGE_CACHE, old), { force: true })
  const partial = join(IMAGE_CACHE, `.${key}.${process.pid}.partial`)
  quiet('docker', [...MACHINE_DOCKER, 'save', '-o', partial, ...images])
  renameSync(partial, archive)
  return archive
}
