//! A mount as devcontainer.json (`mounts`, `workspaceMount`) and `runArgs` (`--mount`, `-v`,
//! `--tmpfs`) write it, read the way `docker run` reads the same text.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::fields::{boolean, invalid};
use crate::error::Result;
pub use crate::runtime::{ContainerMount, MountKind};

/// A mount as this library passes it to the engine.
pub type MountSpec = ContainerMount;

fn kind(text: &str, field: &str) -> std::result::Result<MountKind, String> {
    match text {
        "bind" => Ok(MountKind::Bind),
        "volume" => Ok(MountKind::Volume),
        "tmpfs" => Ok(MountKind::Tmpfs),
        other => Err(format!("{field}: mount type '{other}' is not supported")),
    }
}

/// `true`/`false`/`1`/`0` as docker reads them; a bare key is true.
fn flag(value: Option<&str>, key: &str, field: &str) -> std::result::Result<bool, String> {
    match value {
        None | Some("true" | "1") => Ok(true),
        Some("false" | "0") => Ok(false),
        Some(other) => Err(format!("{field}: {key}={other} is not true or false")),
    }
}

fn number(value: Option<&str>, key: &str, field: &str) -> std::result::Result<i64, String> {
    value
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("{field}: {key} needs a number"))
}

/// `type=bind,source=/a,target=/b[,readonly]`, as `docker run --mount` reads it (no `type`:
/// a volume). `Err` holds what is wrong, for the caller to wrap.
pub fn parse_mount_text(text: &str, field: &str) -> std::result::Result<MountSpec, String> {
    let mut spec = ContainerMount::new(MountKind::Volume, "", "");
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (key, value) = match part.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v)),
            None => (part.trim(), None),
        };
        let text_value = || value.map(str::to_string).unwrap_or_default();
        match key {
            "type" => spec.kind = kind(&text_value(), field)?,
            "source" | "src" => spec.source = text_value(),
            "target" | "destination" | "dst" => spec.target = text_value(),
            "readonly" | "ro" => spec.readonly = flag(value, key, field)?,
            "bind-propagation" => spec.propagation = Some(text_value()),
            "volume-nocopy" => spec.no_copy = flag(value, key, field)?,
            "tmpfs-size" => spec.tmpfs_size = Some(number(value, key, field)?),
            "tmpfs-mode" => {
                let mode = text_value();
                spec.tmpfs_mode = Some(
                    i64::from_str_radix(&mode, 8)
                        .map_err(|_| format!("{field}: tmpfs-mode needs an octal mode"))?,
                );
            }
            "consistency" | "bind-nonrecursive" => {}
            "volume-driver" | "volume-opt" => {
                return Err(format!(
                    "{field}: {key} is not supported (a volume driver's options can bind any host path)"
                ))
            }
            other => return Err(format!("{field}: unknown mount option '{other}'")),
        }
    }
    checked(spec, field)
}

fn checked(spec: MountSpec, field: &str) -> std::result::Result<MountSpec, String> {
    if !spec.target.starts_with('/') {
        return Err(format!("{field} needs an absolute target"));
    }
    if spec.kind == MountKind::Bind && spec.source.is_empty() {
        return Err(format!("{field}: a bind mount needs a source"));
    }
    Ok(spec)
}

/// A `mounts` entry or `workspaceMount`: the string form, or `{ type, source, target,
/// readonly }`.
pub fn parse_mount(value: &Value, field: &str, path: &Path) -> Result<MountSpec> {
    let spec = match value {
        Value::String(text) => parse_mount_text(text, field),
        Value::Object(obj) => {
            let get = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
            let mut spec = ContainerMount::new(MountKind::Volume, "", "");
            spec.kind = match get("type") {
                Some(text) => kind(&text, field).map_err(|e| invalid(path, e))?,
                None => MountKind::Volume,
            };
            spec.source = get("source").unwrap_or_default();
            spec.target = get("target").unwrap_or_default();
            spec.readonly = boolean(obj, "readonly", &format!("{field}.readonly"), path)?;
            checked(spec, field)
        }
        _ => Err(format!("{field} must be a string or an object")),
    };
    spec.map_err(|e| invalid(path, e))
}

/// `-v SRC:DST[:OPTS]` or `-v DST` (an anonymous volume): a source starting with `/` is a
/// bind mount, another a volume's name.
pub fn parse_volume_flag(text: &str, field: &str) -> std::result::Result<MountSpec, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let (source, target, options) = match parts.as_slice() {
        [target] => ("", *target, ""),
        [source, target] => (*source, *target, ""),
        [source, target, options] => (*source, *target, *options),
        _ => return Err(format!("{field}: '{text}' is not SRC:DST[:OPTIONS]")),
    };
    if source.starts_with('.') || source.starts_with('~') {
        return Err(format!(
            "{field}: '{source}' is a relative host path; give an absolute one"
        ));
    }
    let mut spec = ContainerMount::new(
        if source.starts_with('/') {
            MountKind::Bind
        } else {
            MountKind::Volume
        },
        source,
        target,
    );
    for option in options.split(',').filter(|o| !o.is_empty()) {
        match option {
            "ro" | "readonly" => spec.readonly = true,
            "rw" => spec.readonly = false,
            "nocopy" => spec.no_copy = true,
            "z" | "Z" | "cached" | "delegated" | "consistent" => {}
            "private" | "rprivate" | "shared" | "rshared" | "slave" | "rslave" => {
                spec.propagation = Some(option.to_string())
            }
            other => return Err(format!("{field}: unknown volume option '{other}'")),
        }
    }
    checked(spec, field)
}

/// `--tmpfs DST[:size=N,mode=M]`.
pub fn parse_tmpfs_flag(text: &str, field: &str) -> std::result::Result<MountSpec, String> {
    let (target, options) = text.split_once(':').unwrap_or((text, ""));
    let mut spec = ContainerMount::new(MountKind::Tmpfs, "", target);
    let options: BTreeMap<&str, &str> = options
        .split(',')
        .filter_map(|o| o.split_once('='))
        .collect();
    if let Some(size) = options.get("size") {
        spec.tmpfs_size = Some(super::byte_size::parse_bytes(size, "--tmpfs size")?);
    }
    if let Some(mode) = options.get("mode") {
        spec.tmpfs_mode = Some(
            i64::from_str_radix(mode, 8)
                .map_err(|_| format!("{field}: mode needs an octal mode"))?,
        );
    }
    checked(spec, field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mount_strings_read_as_docker_reads_them() {
        let m = parse_mount_text("source=proj-bashhistory,target=/commandhistory", "m").unwrap();
        assert_eq!(
            (m.kind, m.source.as_str()),
            (MountKind::Volume, "proj-bashhistory")
        );
        let m = parse_mount_text(
            "type=bind,src=/a,dst=/b,readonly=0,bind-propagation=rprivate",
            "m",
        )
        .unwrap();
        assert_eq!((m.kind, m.readonly), (MountKind::Bind, false));
        assert_eq!(m.propagation.as_deref(), Some("rprivate"));
        let m = parse_mount_text("type=volume,target=/cache,volume-nocopy", "m").unwrap();
        assert!(m.no_copy && m.source.is_empty());
        let m =
            parse_mount_text("type=tmpfs,target=/t,tmpfs-size=1024,tmpfs-mode=1770", "m").unwrap();
        assert_eq!((m.tmpfs_size, m.tmpfs_mode), (Some(1024), Some(0o1770)));
        for bad in [
            "type=bind,target=/b",
            "type=volume,source=v,target=rel",
            "type=volume,source=v,target=/v,volume-opt=device=/etc",
            "type=npipe,source=a,target=/b",
            "type=bind,source=/a,target=/b,readonly=maybe",
        ] {
            assert!(parse_mount_text(bad, "m").is_err(), "{bad}");
        }
    }

    #[test]
    fn object_mounts_default_to_volumes_and_may_be_anonymous() {
        let m = parse_mount(&json!({ "target": "/data" }), "m", Path::new("f")).unwrap();
        assert_eq!((m.kind, m.source.as_str()), (MountKind::Volume, ""));
        assert!(parse_mount(
            &json!({ "type": "bind", "target": "/x" }),
            "m",
            Path::new("f")
        )
        .is_err());
    }

    #[test]
    fn volume_flags() {
        let m = parse_volume_flag("/host:/c:ro,rshared", "v").unwrap();
        assert_eq!((m.kind, m.readonly), (MountKind::Bind, true));
        assert_eq!(m.propagation.as_deref(), Some("rshared"));
        assert_eq!(
            parse_volume_flag("named:/c", "v").unwrap().kind,
            MountKind::Volume
        );
        assert_eq!(parse_volume_flag("/anon", "v").unwrap().source, "");
        assert!(parse_volume_flag("./rel:/c", "v").is_err());
        let t = parse_tmpfs_flag("/run:size=64m,mode=755", "t").unwrap();
        assert_eq!((t.tmpfs_size, t.tmpfs_mode), (Some(64 << 20), Some(0o755)));
    }
}
