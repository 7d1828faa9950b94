//! The container half on both of the machine's engines: a file installed under `/usr`
//! comes back byte for byte from the checkpoint's image after the session deleted it; a
//! checkpoint taken while a command writes into the container and the clone agrees with
//! itself (the container was paused between the halves); a failed checkpoint leaves the
//! container running, unpaused, with nothing recorded; the bound drops the oldest
//! checkpoint with its image; a stopped container is committed as it is.

use std::path::Path;

use super::*;
use crate::checkpoint::{
    checkpoint_images, checkpoint_session, remove_checkpoint_image, restore_image, CheckpointStore,
};
use crate::container_runtime::{ContainerConfig, ContainerRuntime, DockerRuntime, RuntimeOptions};
use crate::engine::{Engine, EngineOptions};
use crate::runtime::{run_buffered, ContainerMount, ExecRequest, Lifetime, MountKind};

const ENGINES: [&str; 2] = ["/var/run/docker.sock", "/run/podman/podman.sock"];
const IMAGE: &str = "container-isolation-test:debian";

fn engine_options(socket: &str) -> EngineOptions {
    EngineOptions {
        socket_path: Some(socket.into()),
        ..Default::default()
    }
}

/// A running container of `image` named `ci-cp-test-…`, the clone (if any) at `/work`.
async fn sandbox(runtime: &DockerRuntime, image: &str, clone: Option<&Path>) -> String {
    let mounts = clone
        .map(|c| {
            vec![ContainerMount::new(
                MountKind::Bind,
                &c.to_string_lossy(),
                "/work",
            )]
        })
        .unwrap_or_default();
    let id = runtime
        .create(ContainerConfig {
            name: Some(format!(
                "ci-cp-test-{}",
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            )),
            image: Some(image.into()),
            working_directory: "/".into(),
            mounts,
            lifetime: Lifetime::Process,
            ..Default::default()
        })
        .await
        .expect("a container of the test image (`npm test` provisions it)");
    runtime.start(&id).await.unwrap();
    id
}

async fn sh(engine: &Engine, id: &str, script: &str) -> Vec<u8> {
    let out = run_buffered(
        engine,
        id,
        ExecRequest {
            command: vec!["sh".into(), "-c".into(), script.into()],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        out.exit_code,
        0,
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

async fn count(engine: &Engine, id: &str, dir: &str) -> usize {
    let listed = sh(engine, id, &format!("ls {dir} | wc -l")).await;
    String::from_utf8_lossy(&listed).trim().parse().unwrap()
}

async fn running(engine: &Engine, id: &str) -> bool {
    let info = engine.docker().inspect_container(id, None).await.unwrap();
    info.state.and_then(|s| s.running).unwrap_or(false)
}

async fn paused(engine: &Engine, id: &str) -> bool {
    let info = engine.docker().inspect_container(id, None).await.unwrap();
    info.state.and_then(|s| s.paused).unwrap_or(false)
}

/// Removes what a test made on its engine, even when the test panics.
struct Cleanup {
    socket: &'static str,
    containers: std::sync::Mutex<Vec<String>>,
    images: std::sync::Mutex<Vec<String>>,
}

impl Cleanup {
    fn container(&self, id: &str) {
        self.containers.lock().unwrap().push(id.to_string());
    }

    fn image(&self, id: &str) {
        self.images.lock().unwrap().push(id.to_string());
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let socket = self.socket;
        let containers = std::mem::take(&mut *self.containers.lock().unwrap());
        let images = std::mem::take(&mut *self.images.lock().unwrap());
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async {
                let engine = Engine::connect(&engine_options(socket)).await.unwrap();
                for id in containers {
                    let options =
                        bollard::query_parameters::RemoveContainerOptionsBuilder::default()
                            .force(true)
                            .build();
                    let _ = engine.docker().remove_container(&id, Some(options)).await;
                }
                for image in images {
                    let _ = remove_checkpoint_image(&engine, &image).await;
                }
            })
        })
        .join();
    }
}

struct Setup {
    cleanup: Cleanup,
    scratch: Scratch,
    runtime: DockerRuntime,
    engine: Engine,
    session: String,
}

async fn setup(socket: &'static str, tag: &str) -> Setup {
    let scratch = Scratch::new(tag);
    let runtime = DockerRuntime::new(RuntimeOptions {
        engine: engine_options(socket),
        image: Some(IMAGE.into()),
        base_dir: Some(scratch.path("base").to_string_lossy().into()),
        ..Default::default()
    });
    let engine = Engine::connect(&engine_options(socket)).await.unwrap();
    let session = format!("cptest-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    Setup {
        cleanup: Cleanup {
            socket,
            containers: Default::default(),
            images: Default::default(),
        },
        scratch,
        runtime,
        engine,
        session,
    }
}

impl Setup {
    fn take(&self, clone: &Path) -> TakeRequest {
        TakeRequest {
            base_dir: self.scratch.path("base"),
            session: self.session.clone(),
            clone: clone.to_path_buf(),
            label: None,
            limits: Limits::default(),
        }
    }

    fn base(&self) -> String {
        self.scratch.path("base").to_string_lossy().into_owned()
    }

    /// A container of the checkpoint's image.
    async fn sandbox_of(&self, record: &CheckpointRecord) -> (String, String) {
        let image = restore_image(record).unwrap().to_string();
        self.cleanup.image(&image);
        let back = sandbox(&self.runtime, &image, None).await;
        self.cleanup.container(&back);
        (image, back)
    }
}

async fn installed_file_comes_back(socket: &'static str) {
    let s = setup(socket, "cp-usr").await;
    let clone = s.scratch.path("clone");
    busy_clone(&clone);
    let id = sandbox(&s.runtime, IMAGE, Some(&clone)).await;
    s.cleanup.container(&id);
    let installed = sh(
        &s.engine,
        &id,
        "head -c 300000 /dev/urandom > /usr/local/share/ci-cp.bin && cat /usr/local/share/ci-cp.bin",
    )
    .await;

    let failed = checkpoint_session(&s.engine, &id, s.take(&s.scratch.path("none")), 5, async {
        Ok(())
    })
    .await;
    assert!(failed.is_err());
    assert!(
        !paused(&s.engine, &id).await,
        "unpaused after a failed checkpoint"
    );
    let store = CheckpointStore::open(&s.scratch.path("base"), &s.session).unwrap();
    assert!(store.list().unwrap().is_empty());

    let record = checkpoint_session(&s.engine, &id, s.take(&clone), 5, async { Ok(()) })
        .await
        .unwrap();
    assert!(!paused(&s.engine, &id).await);
    assert_eq!(store.get(&record.id).unwrap(), record);
    sh(&s.engine, &id, "rm /usr/local/share/ci-cp.bin").await;

    let (image, back) = s.sandbox_of(&record).await;
    let listed = checkpoint_images(&s.engine, &s.base(), Some(&s.session))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        (listed[0].id.as_str(), listed[0].checkpoint.as_str()),
        (image.as_str(), record.id.as_str())
    );
    let inspected = s.engine.docker().inspect_image(&image).await.unwrap();
    let labels = inspected.config.and_then(|c| c.labels).unwrap_or_default();
    let label = |k: &str| labels.get(k).map(String::as_str);
    assert_eq!(
        label(crate::runtime::labels::SESSION),
        Some(s.session.as_str())
    );
    assert_eq!(
        label(crate::runtime::labels::IMAGE_KIND),
        Some("checkpoint")
    );
    assert_eq!(
        label(crate::runtime::labels::OWNER_PID),
        Some(""),
        "{labels:?}"
    );
    assert_eq!(label(crate::runtime::labels::CLONE_PATH), Some(""));
    let kept = sh(&s.engine, &back, "cat /usr/local/share/ci-cp.bin").await;
    assert!(
        kept == installed,
        "the checkpoint image holds the file byte for byte"
    );

    s.runtime.remove(&back).await.unwrap();
    let second = checkpoint_session(&s.engine, &id, s.take(&clone), 1, async { Ok(()) })
        .await
        .unwrap();
    s.cleanup.image(second.image.as_deref().unwrap());
    assert_eq!(
        store.list().unwrap(),
        vec![second.clone()],
        "the oldest dropped"
    );
    let listed = checkpoint_images(&s.engine, &s.base(), Some(&s.session)).await;
    let ids: Vec<String> = listed.unwrap().into_iter().map(|i| i.id).collect();
    assert_eq!(ids, vec![second.image.clone().unwrap()], "with its image");

    s.runtime.stop(&id, None).await.unwrap();
    let stopped = checkpoint_session(&s.engine, &id, s.take(&clone), 1, async { Ok(()) }).await;
    let stopped = stopped.expect("a stopped container is committed as it is");
    s.cleanup.image(stopped.image.as_deref().unwrap());
    assert!(!running(&s.engine, &id).await);

    remove_checkpoint_image(&s.engine, second.image.as_deref().unwrap())
        .await
        .unwrap();
    remove_checkpoint_image(&s.engine, stopped.image.as_deref().unwrap())
        .await
        .unwrap();
    let listed = checkpoint_images(&s.engine, &s.base(), Some(&s.session)).await;
    assert_eq!(listed.unwrap(), vec![]);
    assert!(image != second.image.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn installed_file_comes_back_from_the_checkpoint_image_on_dockerd() {
    installed_file_comes_back(ENGINES[0]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn installed_file_comes_back_from_the_checkpoint_image_on_podman() {
    installed_file_comes_back(ENGINES[1]).await;
}

/// How many entries `n/` has in the checkpoint's work tree.
fn clone_count(base: &Path, session: &str, record: &CheckpointRecord) -> usize {
    let store = CheckpointStore::open(base, session).unwrap();
    let repo = store.repo();
    let tree = repo.find_tree(record.worktree_tree_id().unwrap()).unwrap();
    let entry = tree.get_path(Path::new("n")).unwrap();
    let n = repo.find_tree(entry.id()).unwrap().len();
    n
}

/// A loop writes file `i` into the container, then into the clone, as fast as it can. A
/// checkpoint taken in the middle has the same files in both halves (or the container's
/// one ahead, stopped between its two writes). Without the pause the image was measured
/// 30 to 50 files ahead of the clone on this machine.
async fn writer_sees_one_instant(socket: &'static str) {
    let s = setup(socket, "cp-loop").await;
    let clone = s.scratch.path("clone");
    busy_clone(&clone);
    let id = sandbox(&s.runtime, IMAGE, Some(&clone)).await;
    s.cleanup.container(&id);
    sh(
        &s.engine,
        &id,
        "mkdir -p /var/tmp/n /work/n; nohup sh -c 'i=0; while :; do i=$((i+1)); : > /var/tmp/n/$i; : > /work/n/$i; done' >/dev/null 2>&1 &",
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let record = checkpoint_session(&s.engine, &id, s.take(&clone), 5, async { Ok(()) })
        .await
        .unwrap();
    let in_clone = clone_count(&s.scratch.path("base"), &s.session, &record);
    let (_, back) = s.sandbox_of(&record).await;
    let in_image = count(&s.engine, &back, "/var/tmp/n").await;
    let after = count(&s.engine, &id, "/var/tmp/n").await;
    assert!(
        in_clone > 0 && after > in_image,
        "the loop ran before and after: {in_clone} {in_image} {after}"
    );
    assert!(
        in_image == in_clone || in_image == in_clone + 1,
        "clone {in_clone}, image {in_image}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_checkpoint_taken_while_a_command_writes_is_consistent_on_dockerd() {
    writer_sees_one_instant(ENGINES[0]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_checkpoint_taken_while_a_command_writes_is_consistent_on_podman() {
    writer_sees_one_instant(ENGINES[1]).await;
}
