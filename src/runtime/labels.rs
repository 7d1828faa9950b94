//! The labels every container of this library carries, so that it can be found again and
//! reaped safely (docs/contract.md §6).

use std::collections::BTreeMap;

use super::lifetime::Lifetime;
use super::owner::OwnerIdentity;

pub const PREFIX: &str = "dev.container-isolation";
pub const MANAGED: &str = "dev.container-isolation.managed";
pub const SESSION: &str = "dev.container-isolation.session";
pub const LIFETIME: &str = "dev.container-isolation.lifetime";
pub const OWNER_PID: &str = "dev.container-isolation.owner-pid";
pub const OWNER_START: &str = "dev.container-isolation.owner-start";
pub const OWNER_BOOT_ID: &str = "dev.container-isolation.owner-boot-id";
pub const OWNER_HOST: &str = "dev.container-isolation.owner-host";
pub const BASE_DIR: &str = "dev.container-isolation.base-dir";
pub const CLONE_PATH: &str = "dev.container-isolation.clone-path";
pub const PROJECT_DIR: &str = "dev.container-isolation.project-dir";
pub const CREATED_AT: &str = "dev.container-isolation.created-at";
/// `sandbox` (kept alive by us) or `job` (the caller's command is the main process).
pub const KIND: &str = "dev.container-isolation.kind";
/// The image as the caller named it (Podman reports `localhost/<name>` for local images).
pub const IMAGE: &str = "dev.container-isolation.image";
/// On an image this library built: the tag it gave it (an image built from ours by someone
/// else inherits our labels, but not under this tag).
pub const IMAGE_TAG: &str = "dev.container-isolation.image-tag";
/// On a container whose agent was uploaded at `AGENT_MOUNT` (no bind mount): its digest.
pub const AGENT_UPLOAD: &str = "dev.container-isolation.agent-upload";
/// On a session's workspace volume: the container it belongs to.
pub const CONTAINER: &str = "dev.container-isolation.container";
/// On an image this library built: `build`, `features` or `uid`.
pub const IMAGE_KIND: &str = "dev.container-isolation.image-kind";
/// On each container and volume of a session's service set: the set's holder container
/// (whose network namespace they share); on the holder, its own name.
pub const SERVICE_SET: &str = "dev.container-isolation.service-set";
/// On a service set's service container: the compose service's name.
pub const SERVICE: &str = "dev.container-isolation.service";
/// On a warm pool member (claimed or not): the key of the settings it was made with.
pub const POOL: &str = "dev.container-isolation.pool";
/// On a session's checkpoint image (`image-kind` `checkpoint`): the checkpoint's id.
pub const CHECKPOINT: &str = "dev.container-isolation.checkpoint";

pub struct LabelContext<'a> {
    pub session: &'a str,
    pub image: &'a str,
    pub lifetime: Lifetime,
    pub base_dir: &'a str,
    pub clone_path: &'a str,
    pub project_dir: &'a str,
    pub job: bool,
    pub owner: &'a OwnerIdentity,
    pub created_at_ms: i64,
}

/// The labels that identify a container's owner process.
pub fn owner_labels(owner: &OwnerIdentity) -> [(&'static str, String); 4] {
    [
        (OWNER_PID, owner.pid.to_string()),
        (OWNER_START, owner.start.clone()),
        (OWNER_BOOT_ID, owner.boot_id.clone()),
        (OWNER_HOST, owner.host.clone()),
    ]
}

/// The caller's labels plus ours; ours win, so that nobody can forge ownership by accident.
pub fn container_labels(
    user_labels: &BTreeMap<String, String>,
    ctx: &LabelContext<'_>,
) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = user_labels
        .iter()
        .filter(|(k, _)| !k.starts_with(PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let ours = [
        (MANAGED, "true".to_string()),
        (SESSION, ctx.session.to_string()),
        (LIFETIME, ctx.lifetime.as_str().to_string()),
        (BASE_DIR, ctx.base_dir.to_string()),
        (CLONE_PATH, ctx.clone_path.to_string()),
        (PROJECT_DIR, ctx.project_dir.to_string()),
        (CREATED_AT, ctx.created_at_ms.to_string()),
        (KIND, if ctx.job { "job" } else { "sandbox" }.to_string()),
        (IMAGE, ctx.image.to_string()),
    ];
    for (key, value) in ours.into_iter().chain(owner_labels(ctx.owner)) {
        labels.insert(key.to_string(), value);
    }
    labels
}

/// Whether a container is a service set's holder, which the set's other containers join:
/// removed after them (Podman refuses to remove it while they exist).
pub fn is_set_holder(name: &str, labels: &std::collections::HashMap<String, String>) -> bool {
    labels.get(SERVICE_SET).is_some_and(|holder| holder == name)
}

/// Whether a container's labels say its agent was uploaded at `AGENT_MOUNT`.
pub fn agent_uploaded(labels: Option<&std::collections::HashMap<String, String>>) -> bool {
    labels.is_some_and(|l| l.get(AGENT_UPLOAD).is_some_and(|v| !v.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_labels_cannot_be_overridden_by_the_caller() {
        let owner = OwnerIdentity {
            pid: 42,
            start: "7".into(),
            boot_id: "b".into(),
            host: "h".into(),
        };
        let mut user = BTreeMap::new();
        user.insert(MANAGED.to_string(), "false".to_string());
        user.insert("team".to_string(), "x".to_string());
        let labels = container_labels(
            &user,
            &LabelContext {
                session: "s1",
                image: "img",
                lifetime: Lifetime::Process,
                base_dir: "/b",
                clone_path: "",
                project_dir: "",
                job: false,
                owner: &owner,
                created_at_ms: 1,
            },
        );
        assert_eq!(labels[MANAGED], "true");
        assert_eq!(labels["team"], "x");
        assert_eq!(labels[OWNER_PID], "42");
        assert_eq!(labels[LIFETIME], "process");
        for key in [
            SESSION,
            OWNER_START,
            OWNER_BOOT_ID,
            OWNER_HOST,
            BASE_DIR,
            CLONE_PATH,
            PROJECT_DIR,
            CREATED_AT,
        ] {
            assert!(labels.contains_key(key), "{key}");
        }
    }
}
