//! A service's `extends`: the service it names, in the same file or in `file:` (read from the
//! project like any compose file), resolved first, then the extending service merged over
//! it by the merge rules. Relative paths of a service taken from another file are made
//! absolute from that file's folder. A cycle is refused, naming it.

use std::path::{Path, PathBuf};

use serde_yaml::{Mapping, Value};

use super::compose_document::Loader;
use super::file_merge::merge_service;
use super::project_files::invalid;
use crate::error::Result;
use crate::session_settings::lexical;

/// The longest chain of services extending one another.
const CHAIN_LIMIT: usize = 32;

/// Every service of `doc` (read from `path`) with its `extends` resolved.
pub fn resolve_extends(doc: &mut Mapping, path: &Path, loader: &mut Loader<'_>) -> Result<()> {
    let Some(Value::Mapping(services)) = doc.get("services").cloned() else {
        return Ok(());
    };
    let mut resolved = Mapping::new();
    for (name, _) in &services {
        let key = name.as_str().unwrap_or_default();
        let service = resolved_service(path, &services, key, loader, &mut Vec::new())?;
        resolved.insert(name.clone(), Value::Mapping(service));
    }
    doc.insert("services".into(), Value::Mapping(resolved));
    Ok(())
}

fn resolved_service(
    path: &Path,
    services: &Mapping,
    name: &str,
    loader: &mut Loader<'_>,
    chain: &mut Vec<String>,
) -> Result<Mapping> {
    let link = format!("{}#{name}", path.display());
    if chain.len() >= CHAIN_LIMIT {
        return Err(invalid(
            path,
            format_args!("extends goes more than {CHAIN_LIMIT} services deep"),
        ));
    }
    if chain.contains(&link) {
        chain.push(link);
        return Err(invalid(
            path,
            format_args!("extends makes a cycle: {}", chain.join(" → ")),
        ));
    }
    let mut service = match services.get(name) {
        Some(Value::Mapping(service)) => service.clone(),
        Some(Value::Null) => Mapping::new(),
        Some(_) => {
            return Err(invalid(
                path,
                format_args!("services.{name} must be a mapping"),
            ))
        }
        None => {
            return Err(invalid(
                path,
                format_args!("extends names no service '{name}'"),
            ))
        }
    };
    let Some(extends) = service.remove("extends") else {
        return Ok(service);
    };
    let (file, base_name) = match &extends {
        Value::String(base) => (None, base.clone()),
        Value::Mapping(long) => (
            long.get("file").and_then(Value::as_str).map(str::to_string),
            long.get("service")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    invalid(
                        path,
                        format_args!("services.{name}.extends needs a service"),
                    )
                })?
                .to_string(),
        ),
        _ => {
            return Err(invalid(
                path,
                format_args!("services.{name}.extends must be a name or a mapping"),
            ))
        }
    };
    chain.push(link);
    let mut base = match file {
        None => resolved_service(path, services, &base_name, loader, chain)?,
        Some(file) => {
            let dir = path.parent().unwrap_or(Path::new("/"));
            let other = lexical(&dir.join(&file))
                .ok_or_else(|| invalid(path, format_args!("extends file {file}")))?;
            let doc = loader.load(&other)?;
            let Some(Value::Mapping(theirs)) = doc.get("services") else {
                return Err(invalid(&other, "has no services"));
            };
            let mut base = resolved_service(&other, theirs, &base_name, loader, chain)?;
            rebase(&mut base, other.parent().unwrap_or(Path::new("/")));
            base
        }
    };
    chain.pop();
    merge_service(&mut base, service);
    Ok(base)
}

/// A relative host path of `service` made absolute from `dir`.
fn rebase(service: &mut Mapping, dir: &Path) {
    let absolute = |p: &str| -> String {
        if Path::new(p).is_absolute() || p.starts_with('~') {
            p.to_string()
        } else {
            lexical(&dir.join(p))
                .unwrap_or_else(|| PathBuf::from(p))
                .to_string_lossy()
                .into_owned()
        }
    };
    match service.get_mut("build") {
        Some(Value::String(context)) if !context.contains("://") => *context = absolute(context),
        Some(Value::Mapping(build)) => {
            let context = build
                .get("context")
                .and_then(Value::as_str)
                .unwrap_or(".")
                .to_string();
            if !context.contains("://") {
                build.insert("context".into(), absolute(&context).into());
            }
        }
        _ => {}
    }
    match service.get_mut("env_file") {
        Some(Value::String(file)) => *file = absolute(file),
        Some(Value::Sequence(files)) => {
            for file in files {
                match file {
                    Value::String(f) => *f = absolute(f),
                    Value::Mapping(long) => {
                        if let Some(Value::String(f)) = long.get_mut("path") {
                            *f = absolute(f);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    if let Some(Value::Sequence(volumes)) = service.get_mut("volumes") {
        for volume in volumes {
            match volume {
                Value::String(short) => {
                    if let Some((source, rest)) = short.split_once(':') {
                        if source.starts_with('.') {
                            *short = format!("{}:{rest}", absolute(source));
                        }
                    }
                }
                Value::Mapping(long) => {
                    let bind = long.get("type").and_then(Value::as_str) == Some("bind");
                    if let Some(Value::String(source)) = long.get_mut("source") {
                        if bind {
                            *source = absolute(source);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}
