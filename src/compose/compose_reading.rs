//! The reading of a compose devcontainer: its files loaded from the project, interpolated,
//! their `extends` resolved and merged in order; the services to start selected and ordered;
//! each service checked against the trust and read into the plan; port clashes refused.

use std::path::{Path, PathBuf};

use serde_yaml::{Mapping, Value};

use super::compose_document::Loader;
use super::compose_env::ComposeEnv;
use super::compose_plan::{
    ComposePlan, Condition, Dependency, MountSource, PlannedService, PlannedVolume,
};
use super::extends::resolve_extends;
use super::file_merge::merge_file;
use super::port_clashes::check_port_clashes;
use super::project_files::{invalid, ProjectFiles};
use super::service_checks::{check_service, CheckedService};
use super::service_paths::PathRules;
use super::service_reading::Reading;
use super::service_selection::{select_services, ServiceNode};

use crate::devcontainer::{ComposeConfig, HostEnv};
use crate::error::Result;
use crate::session_settings::{lexical, refused, Trust};

/// What reading a compose devcontainer takes besides its files.
pub struct ComposeRequest<'a> {
    pub compose: &'a ComposeConfig,
    /// The folder of devcontainer.json (`dockerComposeFile` is relative to it).
    pub config_dir: &'a Path,
    /// The project's root: every file read must be in it.
    pub project: &'a Path,
    /// The host's environment as the host grants it (`trust.localEnv`).
    pub host_env: &'a HostEnv,
    pub trust: &'a Trust,
    /// Sockets whose mount would hand a container the engine.
    pub engine_sockets: &'a [PathBuf],
}

/// The plan; `DEVCONTAINER` naming the file for what is invalid, and with the refusals
/// for what the trust does not grant.
pub fn read_compose_project(request: &ComposeRequest<'_>) -> Result<ComposePlan> {
    let files = ProjectFiles::new(request.project)?;
    let project = lexical(&std::path::absolute(request.project).unwrap_or_default())
        .unwrap_or_else(|| files.root().to_path_buf());
    let paths: Vec<PathBuf> = request
        .compose
        .files
        .iter()
        .map(|f| lexical(&request.config_dir.join(f)).unwrap_or_else(|| PathBuf::from(f)))
        .collect();
    let first = paths
        .first()
        .ok_or_else(|| invalid(request.config_dir, "dockerComposeFile names no file"))?
        .clone();
    let service = request.compose.service.clone().ok_or_else(|| {
        invalid(
            request.config_dir,
            "a compose devcontainer needs `service`, the service the session runs in",
        )
    })?;
    let compose_dir = first.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut env = ComposeEnv::new(request.host_env);
    let dotenv = compose_dir.join(".env");
    if let Some(text) = files.read_optional(&dotenv)? {
        env.load_dotenv(&text).map_err(|e| invalid(&dotenv, e))?;
    }
    let merged = merged_files(&files, &env, &paths)?;
    let fail = |why: String| invalid(&first, why);
    let (services, warnings) = top_level(&merged).map_err(fail)?;
    let (nodes, checked) = checked_services(&services, request.trust).map_err(fail)?;
    let selected = select_services(
        &nodes,
        &request.compose.run_services,
        &service,
        &active_profiles(&env),
    )
    .map_err(fail)?;
    let mut reading = Reading {
        rules: PathRules {
            files: &files,
            project: &project,
            compose_dir: &compose_dir,
            trust: request.trust,
            engine_sockets: request.engine_sockets,
        },
        env: &env,
        refusals: Vec::new(),
        warnings,
    };
    reading.warnings.extend(selected.warnings);
    let planned = plan_selected(&mut reading, &selected.order, &checked).map_err(fail)?;
    if !reading.refusals.is_empty() {
        return Err(refused(&first.to_string_lossy(), &reading.refusals));
    }
    check_port_clashes(&planned).map_err(fail)?;
    let mut warnings = reading.warnings;
    let volumes = named_volumes(&merged, &planned, &mut warnings).map_err(fail)?;
    warnings.extend(env.unset_names().into_iter().map(|name| {
        format!("compose: the variable {name} is not set (not in .env, and the host's environment is read only for names in trust.localEnv); it reads as an empty string")
    }));
    let name = project_name(&env, &merged, &compose_dir);
    if name.is_empty() {
        return Err(fail(
            "the project name is empty (COMPOSE_PROJECT_NAME, name: after interpolation, or the folder's name)".into(),
        ));
    }
    Ok(ComposePlan {
        name,
        project: files.root().to_path_buf(),
        files: paths,
        service,
        services: planned,
        volumes,
        warnings,
        host_env_not_read: env.not_read(),
    })
}

/// The merged files' services, and warnings for the top-level keys a session ignores.
fn top_level(merged: &Mapping) -> std::result::Result<(Mapping, Vec<String>), String> {
    if merged.contains_key("include") {
        return Err(
            "include is not read; merge the files through dockerComposeFile instead".into(),
        );
    }
    let mut warnings = Vec::new();
    for key in merged.keys().filter_map(Value::as_str) {
        match key {
            "name" | "services" | "volumes" | "version" | "include" => {}
            "networks" | "secrets" | "configs" | "models" => warnings.push(format!(
                "compose: the top-level {key} are ignored: a session's services share one sealed network namespace and get nothing of the host"
            )),
            other if other.starts_with("x-") => {}
            other => warnings.push(format!(
                "compose: the top-level {other} is not a key of the compose specification; ignored"
            )),
        }
    }
    match merged.get("services") {
        Some(Value::Mapping(services)) if !services.is_empty() => Ok((services.clone(), warnings)),
        _ => Err("defines no services".into()),
    }
}

/// The most services the files may define.
const SERVICE_LIMIT: usize = 256;

/// One service as written, and what its checked keys come to.
type Checked = (String, Mapping, CheckedService);

/// Every service checked against the trust, and the graph selection walks.
fn checked_services(
    services: &Mapping,
    trust: &Trust,
) -> std::result::Result<(Vec<ServiceNode>, Vec<Checked>), String> {
    if services.len() > SERVICE_LIMIT {
        return Err(format!(
            "defines {} services, more than the {SERVICE_LIMIT} a session runs",
            services.len()
        ));
    }
    let mut checked = Vec::new();
    let mut nodes = Vec::new();
    for (name, raw) in services {
        let name = name.as_str().ok_or("a service name is not a string")?;
        let Value::Mapping(raw) = raw else {
            return Err(format!("services.{name} must be a mapping"));
        };
        let check = check_service(name, raw, trust)?;
        nodes.push(node(name, raw, check.network_service.as_deref()));
        checked.push((name.to_string(), raw.clone(), check));
    }
    Ok((nodes, checked))
}

/// `COMPOSE_PROFILES`, comma-separated.
fn active_profiles(env: &ComposeEnv<'_>) -> Vec<String> {
    env.setting("COMPOSE_PROFILES")
        .map(|p| {
            p.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The selected services read into the plan, in `order`, with what their checks found.
fn plan_selected(
    reading: &mut Reading<'_>,
    order: &[String],
    checked: &[Checked],
) -> std::result::Result<Vec<PlannedService>, String> {
    let mut planned = Vec::new();
    for name in order {
        let (_, raw, check) = checked
            .iter()
            .find(|(n, _, _)| n == name)
            .expect("selected names exist");
        reading.refusals.extend(check.refusals.iter().cloned());
        reading.warnings.extend(check.warnings.iter().cloned());
        let mut service = reading.plan_service(name, raw)?;
        service.privileges = check.privileges.clone();
        if let Some(other) = &check.network_service {
            // Compose starts the service whose namespace this one joins first.
            if !service.depends_on.iter().any(|d| &d.service == other) {
                service.depends_on.push(Dependency {
                    service: other.clone(),
                    condition: Condition::Started,
                    required: true,
                    restart: true,
                });
            }
        }
        planned.push(service);
    }
    Ok(planned)
}

/// The files parsed, interpolated, their `extends` resolved, merged in order.
fn merged_files(files: &ProjectFiles, env: &ComposeEnv<'_>, paths: &[PathBuf]) -> Result<Mapping> {
    let mut loader = Loader::new(files, env);
    let mut merged = Mapping::new();
    for path in paths {
        let mut doc = loader.load(path)?;
        resolve_extends(&mut doc, path, &mut loader)?;
        merge_file(&mut merged, doc);
    }
    Ok(merged)
}

fn node(name: &str, raw: &Mapping, network_service: Option<&str>) -> ServiceNode {
    let names = |v: Option<&Value>| -> Vec<String> {
        match v {
            Some(Value::Sequence(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut depends_on: Vec<(String, bool)> = match raw.get("depends_on") {
        Some(Value::Mapping(long)) => long
            .iter()
            .filter_map(|(k, v)| {
                let required = v.get("required").and_then(Value::as_bool).unwrap_or(true);
                k.as_str().map(|k| (k.to_string(), required))
            })
            .collect(),
        other => names(other).into_iter().map(|n| (n, true)).collect(),
    };
    if let Some(other) = network_service {
        if !depends_on.iter().any(|(d, _)| d == other) {
            depends_on.push((other.to_string(), true));
        }
    }
    ServiceNode {
        name: name.to_string(),
        profiles: names(raw.get("profiles")),
        depends_on,
    }
}

/// The named volumes the planned services mount, each declared at the top level.
fn named_volumes(
    merged: &Mapping,
    planned: &[PlannedService],
    warnings: &mut Vec<String>,
) -> std::result::Result<Vec<PlannedVolume>, String> {
    let declared = match merged.get("volumes") {
        Some(Value::Mapping(map)) => map.clone(),
        _ => Mapping::new(),
    };
    let mut out: Vec<PlannedVolume> = Vec::new();
    for service in planned {
        for mount in &service.mounts {
            let MountSource::Volume(Some(key)) = &mount.source else {
                continue;
            };
            if out.iter().any(|v| &v.key == key) {
                continue;
            }
            let Some(spec) = declared.get(key.as_str()) else {
                return Err(format!(
                    "services.{}.volumes: '{key}' is not declared under the top-level volumes",
                    service.name
                ));
            };
            let mut name = None;
            if let Value::Mapping(spec) = spec {
                for (k, v) in spec {
                    match k.as_str().unwrap_or_default() {
                        "name" => name = v.as_str().map(str::to_string),
                        other if !other.starts_with("x-") => warnings.push(format!(
                            "compose: volumes.{key}.{other} is ignored: a session's volumes are its own"
                        )),
                        _ => {}
                    }
                }
            }
            out.push(PlannedVolume {
                key: key.clone(),
                name,
            });
        }
    }
    Ok(out)
}

/// `COMPOSE_PROJECT_NAME`, else `name:`, else the compose project's folder's name;
/// lower-cased, keeping only `a-z`, `0-9`, `_` and `-`.
fn project_name(env: &ComposeEnv<'_>, merged: &Mapping, compose_dir: &Path) -> String {
    let written = env
        .setting("COMPOSE_PROJECT_NAME")
        .filter(|n| !n.is_empty())
        .or_else(|| {
            merged
                .get("name")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| {
            compose_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    written
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
        .collect()
}

#[cfg(test)]
#[path = "compose_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "compose_key_tests.rs"]
mod key_tests;
