//! A session's settings merged with its image's `devcontainer.metadata`, as the reference
//! CLI merges them: the image's entries first, devcontainer.json's values last. Whatever an
//! entry asks that reaches the host goes through the trust check the config's own fields
//! do, and is refused as image metadata.

use std::collections::BTreeMap;

use super::settings_resolution::{Resolver, SettingsRequest};
use super::stored_settings::{Lifecycle, SessionMount, SessionSettings};
use super::trust::refused;
use crate::devcontainer::{parse_image_metadata, LifecycleCommand, MetadataEntry, METADATA_LABEL};
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::ContainerPrivileges;

/// The last entry's value of a field, the config's (`own`) winning when it has one.
fn last_wins<T: Clone>(
    own: &Option<T>,
    entries: &[MetadataEntry],
    pick: impl Fn(&MetadataEntry) -> &Option<T>,
) -> Option<T> {
    own.clone()
        .or_else(|| entries.iter().rev().find_map(|e| pick(e).clone()))
}

/// Mounts merged by target, a later one replacing an earlier; the clone's mount stays first
/// and is never replaced by the image's.
fn merge_mounts(clone: SessionMount, ordered: Vec<SessionMount>) -> Vec<SessionMount> {
    let mut out: Vec<SessionMount> = vec![clone];
    for m in ordered {
        match out.iter().position(|o| o.mount.target == m.mount.target) {
            Some(0) => {}
            Some(i) => out[i] = m,
            None => out.push(m),
        }
    }
    out
}

fn union(into: &mut Vec<String>, more: &[String]) {
    for item in more {
        if !into.contains(item) {
            into.push(item.clone());
        }
    }
}

/// An entry's lifecycle commands, without those the config repeats for the same step (an
/// image built with features carries the config's own entry too).
fn entry_lifecycle(entry: &MetadataEntry, own: &Lifecycle) -> Lifecycle {
    let unless_own = |c: &Option<LifecycleCommand>, o: &Option<LifecycleCommand>| {
        c.clone().filter(|c| o.as_ref() != Some(c))
    };
    Lifecycle {
        initialize: None,
        on_create: unless_own(&entry.on_create, &own.on_create),
        update_content: unless_own(&entry.update_content, &own.update_content),
        post_create: unless_own(&entry.post_create, &own.post_create),
        post_start: unless_own(&entry.post_start, &own.post_start),
        post_attach: unless_own(&entry.post_attach, &own.post_attach),
    }
}

/// The entries of `image`'s `devcontainer.metadata` label (none without one).
pub async fn read_image_metadata(engine: &Engine, image: &str) -> Result<Vec<MetadataEntry>> {
    let inspected = engine
        .call(
            &format!("image '{image}'"),
            engine.docker().inspect_image(image),
        )
        .await?;
    let labels = inspected.config.and_then(|c| c.labels).unwrap_or_default();
    match labels.get(METADATA_LABEL) {
        Some(label) => parse_image_metadata(image, label),
        None => Ok(Vec::new()),
    }
}

pub fn merge_image_metadata(
    request: &SettingsRequest<'_>,
    settings: &mut SessionSettings,
    image: &str,
    entries: &[MetadataEntry],
) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let (image_mounts, privileges) = checked_asks(request, image, entries)?;
    let mut own_mounts = std::mem::take(&mut settings.mounts).into_iter();
    let clone = own_mounts
        .next()
        .expect("the clone's mount is always first");
    let mut mounts = image_mounts;
    mounts.extend(own_mounts);
    settings.mounts = merge_mounts(clone, mounts);

    let p = &mut settings.privileges;
    p.privileged |= privileges.privileged;
    let (own_caps, own_opts) = (
        std::mem::take(&mut p.cap_add),
        std::mem::take(&mut p.security_opt),
    );
    p.cap_add = privileges.cap_add;
    union(&mut p.cap_add, &own_caps);
    p.security_opt = privileges.security_opt;
    union(&mut p.security_opt, &own_opts);

    merge_environment(settings, entries);
    merge_behaviour(settings, entries);
    settings.image_lifecycle = entries
        .iter()
        .map(|e| entry_lifecycle(e, &settings.lifecycle))
        .filter(|l| *l != Lifecycle::default())
        .collect();
    Ok(())
}

/// The entries' mounts and privileges, each checked against the trust: what the host has
/// not allowed is refused all at once.
fn checked_asks(
    request: &SettingsRequest<'_>,
    image: &str,
    entries: &[MetadataEntry],
) -> Result<(Vec<SessionMount>, ContainerPrivileges)> {
    let mut r = Resolver {
        request,
        config_path: format!("image {image} (label {METADATA_LABEL})"),
        refusals: Vec::new(),
    };
    let mut image_mounts = Vec::new();
    let mut privileges = ContainerPrivileges::default();
    for (i, entry) in entries.iter().enumerate() {
        let field = |name: &str| format!("image metadata[{i}].{name}");
        for (j, m) in entry.mounts.iter().enumerate() {
            image_mounts.extend(r.mount(&field(&format!("mounts[{j}]")), m)?);
        }
        let asked = [
            ("privileged", entry.privileged, &[][..], &[][..]),
            ("capAdd", false, &entry.cap_add[..], &[][..]),
            ("securityOpt", false, &[][..], &entry.security_opt[..]),
        ];
        for (name, privileged, caps, opts) in asked {
            let ask = ContainerPrivileges {
                privileged,
                cap_add: caps.to_vec(),
                security_opt: opts.to_vec(),
                ..Default::default()
            };
            r.refusals
                .extend(request.trust.check_privileges(&field(name), &ask, None));
        }
        privileges.privileged |= entry.privileged;
        union(&mut privileges.cap_add, &entry.cap_add);
        union(&mut privileges.security_opt, &entry.security_opt);
    }
    if !r.refusals.is_empty() {
        return Err(refused(&r.config_path, &r.refusals));
    }
    Ok((image_mounts, privileges))
}

/// `containerEnv` and `remoteEnv`: the entries' in order, the config's last.
fn merge_environment(settings: &mut SessionSettings, entries: &[MetadataEntry]) {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    let mut remote_env = BTreeMap::new();
    for entry in entries {
        env.extend(entry.container_env.clone());
        remote_env.extend(entry.remote_env.clone());
    }
    env.append(&mut settings.env);
    settings.env = env;
    remote_env.append(&mut settings.remote_env);
    settings.remote_env = remote_env;
}

/// Users and the container's behaviour: the last one set wins (`init`: any true).
fn merge_behaviour(settings: &mut SessionSettings, entries: &[MetadataEntry]) {
    settings.remote_user = last_wins(&settings.remote_user, entries, |e| &e.remote_user);
    settings.container_user = last_wins(&settings.container_user, entries, |e| &e.container_user);
    let b = &mut settings.behaviour;
    b.override_command = last_wins(&b.override_command, entries, |e| &e.override_command);
    b.shutdown_action = last_wins(&b.shutdown_action, entries, |e| &e.shutdown_action);
    b.user_env_probe = last_wins(&b.user_env_probe, entries, |e| &e.user_env_probe);
    b.update_remote_user_uid = last_wins(&b.update_remote_user_uid, entries, |e| {
        &e.update_remote_user_uid
    });
    b.init = if entries.iter().any(|e| e.init == Some(true)) {
        Some(true)
    } else {
        last_wins(&b.init, entries, |e| &e.init)
    };
    b.entrypoints = entries
        .iter()
        .filter_map(|e| e.entrypoint.clone())
        .collect();
    if !b.override_command() {
        for entrypoint in &b.entrypoints {
            settings.warnings.push(format!(
                "image metadata entrypoint {entrypoint} is not run: overrideCommand is false, so the image's own command runs"
            ));
        }
    }
}

#[cfg(test)]
#[path = "metadata_merge_tests.rs"]
mod tests;
