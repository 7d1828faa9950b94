//! `readComposeProject` (docs/api.md, "Compose devcontainers"): what a Docker Compose
//! devcontainer would run, read under the host's trust before anything is made.

use std::path::PathBuf;

use napi::bindgen_prelude::{Either, Undefined};
use napi_derive::napi;

use super::clone_manager::blocking;
use super::compose_service::ComposeService;
use super::error::Outcome;
use super::trust::WorkspaceTrust;
use crate::compose::{self, ComposePlan};
use crate::session_settings::Trust;

/// A named volume the services mount.
#[napi(object, object_from_js = false)]
pub struct ComposeVolume {
    /// Its key under the files' top-level `volumes`.
    pub key: String,
    /// The `name:` the files give it, if any.
    pub name: Option<String>,
}

/// What a compose devcontainer would run.
#[napi(object, object_from_js = false)]
pub struct ComposeProject {
    /// Compose's project name, normalised (a session puts its id before it).
    pub name: String,
    /// The compose files read, in merge order (absolute).
    pub files: Vec<String>,
    /// devcontainer.json's `service`: the container the session's tools run in.
    pub service: String,
    /// What would be started, each after what it depends on.
    pub services: Vec<ComposeService>,
    /// The named volumes those services mount.
    pub volumes: Vec<ComposeVolume>,
    /// What the files ask for that is not acted on, one sentence each.
    pub warnings: Vec<String>,
    /// Variables the files read that the host's environment was not asked for (not in
    /// `trust.localEnv`).
    pub host_env_not_read: Vec<String>,
}

/// Options of `readComposeProject`.
#[napi(object, object_to_js = false)]
pub struct ReadComposeOptions {
    /// The trust `Workspaces.create` would apply (default: nothing granted).
    pub trust: Option<WorkspaceTrust>,
}

impl From<ComposePlan> for ComposeProject {
    fn from(plan: ComposePlan) -> Self {
        let path = |p: PathBuf| p.to_string_lossy().into_owned();
        ComposeProject {
            name: plan.name,
            files: plan.files.into_iter().map(path).collect(),
            service: plan.service,
            services: plan
                .services
                .into_iter()
                .map(|s| ComposeService::of(s, &plan.project))
                .collect(),
            volumes: plan
                .volumes
                .into_iter()
                .map(|v| ComposeVolume {
                    key: v.key,
                    name: v.name,
                })
                .collect(),
            warnings: plan.warnings,
            host_env_not_read: plan.host_env_not_read,
        }
    }
}

/// What the project's Docker Compose devcontainer would run, read as `Workspaces.create`
/// would read it under `trust`; `undefined` when the project has no devcontainer.json or it
/// names no compose file. Rejects DEVCONTAINER for a file that is invalid, and with
/// `refusals` for what the trust does not grant. Never contacts an engine.
#[napi(ts_return_type = "Promise<ComposeProject | undefined>")]
pub async fn read_compose_project(
    project_dir: String,
    opts: Option<ReadComposeOptions>,
) -> Outcome<Either<ComposeProject, Undefined>> {
    let trust: Trust = opts
        .and_then(|o| o.trust)
        .map(Trust::from)
        .unwrap_or_default();
    blocking(move || compose::read_project_compose(&PathBuf::from(project_dir), &trust))
        .await
        .map(|plan| match plan {
            Some(plan) => Either::A(ComposeProject::from(plan)),
            None => Either::B(()),
        })
        .into()
}
