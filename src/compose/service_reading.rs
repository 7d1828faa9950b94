//! One compose service read into what a session makes its container from: its keys sorted by
//! what a session does with them (service_keys.rs), the ones it uses parsed with the compose
//! specification's typed model (`compose_spec`), paths placed against the project, names
//! without values filled from the compose environment.

use std::collections::BTreeMap;

use compose_spec::service::build::{Context, Dockerfile};
use compose_spec::service::volumes::{
    into_long_iter as volume_iter, mount::BindPropagation, mount::Mount,
};
use compose_spec::service::Condition as SpecCondition;
use compose_spec::{Service, ShortOrLong};
use serde_yaml::{Mapping, Value};

use super::compose_env::ComposeEnv;
use super::compose_plan::{
    Condition, Dependency, MountSource, PlannedService, ServiceBuild, ServiceMount,
};
use super::dotenv::parse_dotenv;
use super::interpolation::{substitute, Variables};
use super::service_keys::{key_use, KeyUse};
use super::service_paths::PathRules;
use super::spec_values::{argv, healthcheck, name_values, service_ports, without_consistency};
use crate::session_settings::{Grant, Refusal};

/// `build` keys read into the plan.
const BUILD_MAPPED: &[&str] = &["context", "dockerfile", "args", "target"];
/// `build` keys that hand the build something of the host.
const BUILD_REFUSED: &[(&str, &str)] = &[
    ("ssh", "the host's SSH agent or keys"),
    ("secrets", "files or variables of the host"),
    ("entitlements", "privileges"),
];

pub struct Reading<'a> {
    pub rules: PathRules<'a>,
    pub env: &'a ComposeEnv<'a>,
    pub refusals: Vec<Refusal>,
    pub warnings: Vec<String>,
}

impl Reading<'_> {
    /// The keys a session reads, each other key warned about by name (the checked ones are
    /// service_checks.rs's).
    fn mapped_keys(&mut self, name: &str, raw: &Mapping) -> Result<Mapping, String> {
        let mut mapped = Mapping::new();
        for (key, value) in raw {
            let k = key.as_str().unwrap_or_default();
            match key_use(k) {
                KeyUse::Mapped if k == "build" => {
                    mapped.insert(key.clone(), self.build_keys(name, value)?);
                }
                KeyUse::Mapped if k == "volumes" => {
                    mapped.insert(key.clone(), without_consistency(value));
                }
                KeyUse::Mapped => {
                    mapped.insert(key.clone(), value.clone());
                }
                KeyUse::Ignored(why) => self
                    .warnings
                    .push(format!("compose: services.{name}.{k} is ignored: {why}")),
                KeyUse::Unknown => self.warnings.push(format!(
                    "compose: services.{name}.{k} is not a key of the compose specification; ignored"
                )),
                KeyUse::Checked | KeyUse::Extension => {}
            }
        }
        Ok(mapped)
    }

    fn build_keys(&mut self, name: &str, build: &Value) -> Result<Value, String> {
        let Value::Mapping(long) = build else {
            return Ok(build.clone());
        };
        let mut kept = Mapping::new();
        for (key, value) in long {
            let k = key.as_str().unwrap_or_default();
            let field = format!("services.{name}.build.{k}");
            if BUILD_MAPPED.contains(&k) {
                kept.insert(key.clone(), value.clone());
            } else if let Some((_, what)) = BUILD_REFUSED.iter().find(|(r, _)| *r == k) {
                return Err(format!("{field} is refused: it hands the build {what}"));
            } else if k == "network" && value.as_str() == Some("host") {
                return Err(format!(
                    "{field}: 'host' is refused: a build has no network of the host"
                ));
            } else if k == "privileged" && value.as_bool() == Some(true) {
                if self.rules.trust.privileged {
                    self.warnings
                        .push(format!("compose: {field} is not applied"));
                } else {
                    self.refusals.push(Refusal::new(
                        &field,
                        "a privileged build",
                        Grant::Flag("privileged"),
                    ));
                }
            } else if !k.starts_with("x-") {
                self.warnings.push(format!("compose: {field} is ignored"));
            }
        }
        Ok(Value::Mapping(kept))
    }

    /// The service, typed and placed. `Err` says what is invalid.
    pub fn plan_service(&mut self, name: &str, raw: &Mapping) -> Result<PlannedService, String> {
        let mapped = self.mapped_keys(name, raw)?;
        let service: Service = serde_yaml::from_value(Value::Mapping(mapped))
            .map_err(|e| format!("services.{name}: {e}"))?;
        let field = format!("services.{name}");
        let text = |k: &str| {
            raw.get(k).and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
        };
        let mut planned = PlannedService {
            name: name.to_string(),
            image: service.image.as_ref().map(|i| i.to_string()),
            user: service.user.as_ref().map(|u| u.to_string()),
            working_dir: service
                .working_dir
                .as_ref()
                .map(|p| p.as_path().to_string_lossy().into_owned()),
            init: raw.get("init").and_then(Value::as_bool),
            read_only: service.read_only,
            platform: text("platform"),
            ..Default::default()
        };
        planned.command = service
            .command
            .clone()
            .map(|c| argv(c, &format!("{field}.command")))
            .transpose()?;
        planned.entrypoint = service
            .entrypoint
            .clone()
            .map(|c| argv(c, &format!("{field}.entrypoint")))
            .transpose()?;
        planned.environment = self.environment(&field, &service)?;
        planned.labels = name_values(service.labels.clone())
            .into_iter()
            .map(|(k, v)| (k, v.unwrap_or_default()))
            .collect();
        planned.healthcheck = service.healthcheck.clone().map(healthcheck);
        planned.build = self.build(&field, &service)?;
        planned.mounts = self.mounts(&field, &service)?;
        planned.tmpfs = service
            .tmpfs
            .clone()
            .map(|t| {
                t.into_list()
                    .into_iter()
                    .map(|p| p.as_path().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        planned.ports = service_ports(&service);
        planned.depends_on = match service.depends_on.clone() {
            ShortOrLong::Short(names) => names
                .into_iter()
                .map(|n| Dependency {
                    service: n.to_string(),
                    condition: Condition::Started,
                    required: true,
                    restart: false,
                })
                .collect(),
            ShortOrLong::Long(map) => map
                .into_iter()
                .map(|(n, d)| Dependency {
                    service: n.to_string(),
                    condition: match d.condition {
                        SpecCondition::ServiceStarted => Condition::Started,
                        SpecCondition::ServiceHealthy => Condition::Healthy,
                        SpecCondition::ServiceCompletedSuccessfully => {
                            Condition::CompletedSuccessfully
                        }
                    },
                    required: d.required,
                    restart: d.restart,
                })
                .collect(),
        };
        Ok(planned)
    }

    /// `env_file` first, then `environment` over it; a name without a value takes the compose
    /// environment's, else is left out with a warning.
    fn environment(
        &mut self,
        field: &str,
        service: &Service,
    ) -> Result<BTreeMap<String, String>, String> {
        let mut out = BTreeMap::new();
        if let Some(files) = service.env_file.clone() {
            for entry in files.into_list() {
                let (path, required) = match entry {
                    ShortOrLong::Short(path) => (path, true),
                    ShortOrLong::Long(config) => (config.path, config.required),
                };
                let absolute = self.rules.compose_dir.join(&path);
                let text = self
                    .rules
                    .files
                    .read_optional(&absolute)
                    .map_err(|e| format!("{field}.env_file: {}", e.message))?;
                let Some(text) = text else {
                    if required {
                        return Err(format!(
                            "{field}.env_file: {} does not exist",
                            absolute.display()
                        ));
                    }
                    continue;
                };
                let entries =
                    parse_dotenv(&text).map_err(|e| format!("{}: {e}", absolute.display()))?;
                for entry in entries {
                    let value = match entry.value {
                        Some(v) if entry.interpolate => substitute(&v, self.env)?,
                        Some(v) => v,
                        None => match self.env.get(&entry.key) {
                            Some(v) => v,
                            None => continue,
                        },
                    };
                    out.insert(entry.key, value);
                }
            }
        }
        for (key, value) in name_values(service.environment.clone()) {
            match value {
                Some(value) => {
                    out.insert(key, value);
                }
                None => match self.env.get(&key) {
                    Some(value) => {
                        out.insert(key, value);
                    }
                    None => self.warnings.push(format!(
                        "compose: {field}.environment.{key} has no value and is set nowhere (the host's environment is read only for names in trust.localEnv); it is left unset"
                    )),
                },
            }
        }
        Ok(out)
    }

    fn build(&mut self, field: &str, service: &Service) -> Result<Option<ServiceBuild>, String> {
        let Some(build) = service.build.clone() else {
            return Ok(None);
        };
        let build = match build {
            ShortOrLong::Short(context) => compose_spec::service::build::Build {
                context: Some(context),
                ..Default::default()
            },
            ShortOrLong::Long(build) => build,
        };
        let context = match build.context.unwrap_or(Context::Path(".".into())) {
            Context::Path(path) => path,
            Context::Url(url) => {
                return Err(format!("{field}.build.context '{url}' is refused: a build's context must be a folder of the project"))
            }
        };
        let context = self.rules.build_path(
            &format!("{field}.build.context"),
            &context,
            true,
            &mut self.refusals,
        )?;
        let dockerfile = match build.dockerfile {
            None => context.join("Dockerfile"),
            Some(Dockerfile::File(file)) => context.join(file),
            Some(Dockerfile::Inline(_)) => {
                return Err(format!(
                    "{field}.build.dockerfile_inline is not read; name a Dockerfile of the project"
                ))
            }
        };
        let dockerfile = self.rules.build_path(
            &format!("{field}.build.dockerfile"),
            &dockerfile,
            false,
            &mut self.refusals,
        )?;
        let mut args = BTreeMap::new();
        for (key, value) in name_values(build.args) {
            match value {
                Some(value) => {
                    args.insert(key, value);
                }
                None => {
                    if let Some(value) = self.env.get(&key) {
                        args.insert(key, value);
                    }
                }
            }
        }
        Ok(Some(ServiceBuild {
            context,
            dockerfile,
            args,
            target: build.target,
        }))
    }

    fn mounts(&mut self, field: &str, service: &Service) -> Result<Vec<ServiceMount>, String> {
        let mut out = Vec::new();
        for mount in volume_iter(service.volumes.clone()) {
            let at = format!("{field}.volumes");
            let (source, common) = match mount {
                Mount::Volume(volume) => (
                    MountSource::Volume(volume.source.map(|s| s.to_string())),
                    volume.common,
                ),
                Mount::Tmpfs(tmpfs) => (MountSource::Tmpfs, tmpfs.common),
                Mount::Bind(bind) => {
                    let propagation = bind.bind.as_ref().and_then(|b| b.propagation);
                    if propagation.is_some_and(|p| {
                        !matches!(p, BindPropagation::Private | BindPropagation::RPrivate)
                    }) && !self.rules.trust.host_namespaces
                    {
                        self.refusals.push(Refusal::new(
                            &at,
                            "mount propagation shared with the host",
                            Grant::Flag("hostNamespaces"),
                        ));
                    }
                    let Some(source) =
                        self.rules
                            .bind_source(&at, bind.source.as_path(), &mut self.refusals)?
                    else {
                        continue;
                    };
                    (source, bind.common)
                }
                Mount::NamedPipe(_) | Mount::Cluster(_) => {
                    return Err(format!("{at}: named pipes and cluster volumes are refused"))
                }
            };
            out.push(ServiceMount {
                source,
                target: common.target.as_path().to_string_lossy().into_owned(),
                read_only: common.read_only,
            });
        }
        Ok(out)
    }
}
