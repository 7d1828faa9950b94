//! The environment a session's tools and lifecycle commands get: the remote user's probed
//! shell environment (`userEnvProbe`), `remoteEnv` on top with `${containerEnv:…}`
//! resolved against the running container's environment, and the variables `remoteEnv`
//! sets to null removed.

use std::collections::BTreeMap;

use crate::devcontainer::{env_value, substitute_with, Command, LifecycleCommand};

/// What a command runs with. `replace`: `env` is the whole environment (some variable is
/// unset, which an addition cannot do); otherwise it is added to the container's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteEnv {
    pub env: BTreeMap<String, String>,
    pub replace: bool,
    /// The container's own environment, which `${containerEnv:…}` reads.
    pub container: BTreeMap<String, String>,
}

/// The `PATH` Docker and Podman give a container's processes when its image sets none.
const ENGINE_DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// The environment a container's processes start with, from its (or its image's)
/// `Config.Env`: those variables, and the engine's default `PATH` where they have none
/// (dockerd adds it when it starts the processes, not to `Config.Env`), so that
/// `${containerEnv:PATH}` names the directories the container's commands are found in.
pub fn process_env(list: Option<Vec<String>>) -> BTreeMap<String, String> {
    let mut env = env_list(list);
    env.entry("PATH".to_string())
        .or_insert_with(|| ENGINE_DEFAULT_PATH.to_string());
    env
}

/// `NAME=value` lines of an engine's `Config.Env`.
pub fn env_list(list: Option<Vec<String>>) -> BTreeMap<String, String> {
    list.unwrap_or_default()
        .into_iter()
        .filter_map(|item| {
            let (k, v) = item.split_once('=')?;
            Some((k.to_string(), v.to_string()))
        })
        .collect()
}

/// `${containerEnv:NAME}` and `${containerEnv:NAME:default}` in `text` from `env`
/// (unset and no default: empty); other `${…}` stay as they are.
pub fn substitute_container_env(text: &str, env: &BTreeMap<String, String>) -> String {
    substitute_with(text, |name, args| match name {
        "containerEnv" => env_value(args, |var| env.get(var).cloned()),
        _ => None,
    })
}

/// A lifecycle command with `${containerEnv:…}` resolved in each of its strings.
pub fn resolve_command(
    command: &LifecycleCommand,
    env: &BTreeMap<String, String>,
) -> LifecycleCommand {
    let one = |c: &Command| match c {
        Command::Shell(s) => Command::Shell(substitute_container_env(s, env)),
        Command::Argv(argv) => Command::Argv(
            argv.iter()
                .map(|a| substitute_container_env(a, env))
                .collect(),
        ),
    };
    match command {
        LifecycleCommand::Single(c) => LifecycleCommand::Single(one(c)),
        LifecycleCommand::Parallel(named) => {
            LifecycleCommand::Parallel(named.iter().map(|(n, c)| (n.clone(), one(c))).collect())
        }
    }
}

/// The environment from the probe (if any) and `remoteEnv`, against the container's own.
pub fn remote_env(
    container: BTreeMap<String, String>,
    probed: Option<&BTreeMap<String, String>>,
    remote: &BTreeMap<String, Option<String>>,
) -> RemoteEnv {
    let mut env = probed.cloned().unwrap_or_default();
    if let (Some(probed_path), Some(own_path)) = (env.get("PATH"), container.get("PATH")) {
        let path = kept_path(probed_path, own_path);
        env.insert("PATH".into(), path);
    }
    let mut unset = Vec::new();
    for (name, value) in remote {
        match value {
            Some(v) => {
                env.insert(name.clone(), substitute_container_env(v, &container));
            }
            None => unset.push(name.clone()),
        }
    }
    let replace = !unset.is_empty();
    if replace {
        let mut all = container.clone();
        all.extend(env);
        for name in &unset {
            all.remove(name);
        }
        env = all;
    }
    RemoteEnv {
        env,
        replace,
        container,
    }
}

/// A login shell's `PATH` (Debian's `/etc/profile` sets its own) with the container's
/// entries it dropped put back in front, in their order: what an image or its features add
/// to `PATH` stays found.
fn kept_path(probed: &str, container: &str) -> String {
    let shell: Vec<&str> = probed.split(':').collect();
    let mut path: Vec<&str> = container
        .split(':')
        .filter(|dir| !dir.is_empty() && !shell.contains(dir))
        .collect();
    path.extend(shell);
    path.join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probed_path_keeps_the_container_entries_it_dropped() {
        assert_eq!(
            kept_path(
                "/usr/local/bin:/usr/bin:/bin",
                "/opt/x/bin:/usr/local/bin:/usr/bin:/sbin"
            ),
            "/opt/x/bin:/sbin:/usr/local/bin:/usr/bin:/bin"
        );
        assert_eq!(
            kept_path("/home/a/bin:/usr/bin", "/usr/bin"),
            "/home/a/bin:/usr/bin"
        );
    }

    fn map(items: &[(&str, &str)]) -> BTreeMap<String, String> {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn container_variables_resolve_with_defaults() {
        let env = map(&[("PATH", "/usr/bin"), ("E", "")]);
        assert_eq!(
            substitute_container_env("${containerEnv:PATH}:/opt/bin", &env),
            "/usr/bin:/opt/bin"
        );
        // As the reference CLI reads it: the default ends at the next `:`.
        assert_eq!(
            substitute_container_env("${containerEnv:NO:d:e}", &env),
            "d"
        );
        assert_eq!(substitute_container_env("${containerEnv:NO}x", &env), "x");
        assert_eq!(substitute_container_env("${containerEnv:E:d}", &env), "");
        assert_eq!(
            substitute_container_env("${other} ${containerEnv:P", &env),
            "${other} ${containerEnv:P"
        );
    }

    #[test]
    fn a_container_without_path_resolves_to_the_engines_default() {
        let own = process_env(Some(vec!["HOME=/root".to_string()]));
        let remote = [(
            "PATH".to_string(),
            Some("${containerEnv:PATH}:/opt/tool/bin".to_string()),
        )]
        .into();
        let out = remote_env(own, None, &remote);
        assert_eq!(
            out.env["PATH"],
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/tool/bin"
        );
        let set = process_env(Some(vec!["PATH=/opt/bin".to_string()]));
        assert_eq!(set["PATH"], "/opt/bin");
    }

    #[test]
    fn null_unsets_and_needs_the_whole_environment() {
        let container = map(&[("PATH", "/bin"), ("X", "1"), ("Y", "2")]);
        let probed = map(&[("P", "profile")]);
        let remote = [
            ("X".to_string(), None),
            (
                "PATH".to_string(),
                Some("${containerEnv:PATH}:/opt".to_string()),
            ),
        ]
        .into();
        let out = remote_env(container.clone(), Some(&probed), &remote);
        assert!(out.replace);
        assert_eq!(
            out.env,
            map(&[("P", "profile"), ("PATH", "/bin:/opt"), ("Y", "2")])
        );
        let added = remote_env(
            container,
            None,
            &[("A".to_string(), Some("a".to_string()))].into(),
        );
        assert!(!added.replace);
        assert_eq!(added.env, map(&[("A", "a")]));
    }
}
