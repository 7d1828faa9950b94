//! What a devcontainer.json asks for that the reference CLI honours and this library does
//! not, as warnings, so that nothing is dropped silently. Tool-specific settings
//! (`customizations`, the older top-level `extensions`/`settings`) need none; a property no
//! devcontainer.json has is warned about as unknown (the reference ignores it silently, which
//! hides typos such as `postCreateCommands`).

use serde_json::{Map, Value};

/// Honoured by the reference, not here, and why it matters.
const NOT_HONOURED: &[(&str, &str)] = &[
    (
        "portsAttributes",
        "ports are forwarded without their attributes",
    ),
    (
        "otherPortsAttributes",
        "ports are forwarded without their attributes",
    ),
];

/// Read here, or by the parts of this library that own them (`features`, the container's
/// lifetime and user settings), or tool-specific.
const KNOWN: &[&str] = &[
    "$schema",
    "name",
    "image",
    "build",
    "dockerFile",
    "context",
    "containerEnv",
    "remoteEnv",
    "mounts",
    "workspaceFolder",
    "workspaceMount",
    "containerUser",
    "remoteUser",
    "runArgs",
    "privileged",
    "capAdd",
    "securityOpt",
    "initializeCommand",
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand",
    "dockerComposeFile",
    "service",
    "runServices",
    "features",
    "overrideFeatureInstallOrder",
    "overrideCommand",
    "shutdownAction",
    "init",
    "waitFor",
    "userEnvProbe",
    "updateRemoteUserUID",
    "forwardPorts",
    "appPort",
    "hostRequirements",
    "customizations",
    "secrets",
    "extensions",
    "settings",
    "devPort",
];

/// `build` keys the reference honours and this library does not.
const BUILD_NOT_HONOURED: &[(&str, &str)] = &[
    ("options", "no extra docker build option is passed"),
    (
        "cacheFrom",
        "the build uses only the engine's own cache of this project's earlier builds",
    ),
];

/// One line for each, in the order above, then unknown properties in name order.
pub fn unhonoured_warnings(map: &Map<String, Value>) -> Vec<String> {
    let present = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
    let mut warnings = Vec::new();
    if !present(map.get("dockerComposeFile")) {
        for key in ["service", "runServices"] {
            if present(map.get(key)) {
                warnings.push(format!(
                    "{key} is only used with dockerComposeFile and was ignored"
                ));
            }
        }
    }
    for (key, why) in NOT_HONOURED {
        if present(map.get(*key)) {
            warnings.push(format!("{key} is not supported and was ignored: {why}"));
        }
    }
    if let Some(Value::Object(build)) = map.get("build") {
        for (key, why) in BUILD_NOT_HONOURED {
            if present(build.get(*key)) {
                warnings.push(format!(
                    "build.{key} is not supported and was ignored: {why}"
                ));
            }
        }
    }
    let mut unknown: Vec<&String> = map
        .keys()
        .filter(|k| !KNOWN.contains(&k.as_str()) && !NOT_HONOURED.iter().any(|(n, _)| n == k))
        .collect();
    unknown.sort();
    warnings.extend(
        unknown
            .into_iter()
            .map(|k| format!("{k} is not a devcontainer.json property and was ignored")),
    );
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(text: &str) -> Vec<String> {
        let Value::Object(map) = serde_json::from_str(text).unwrap() else {
            panic!("not an object");
        };
        unhonoured_warnings(&map)
    }

    #[test]
    fn what_the_reference_honours_and_this_reader_does_not_is_warned_about() {
        let found = warnings(
            r#"{ "build": { "dockerfile": "Dockerfile", "options": ["--add-host=a:1.2.3.4"], "cacheFrom": "x" },
                 "forwardPorts": [3000], "appPort": 8080, "portsAttributes": {}, "otherPortsAttributes": {},
                 "hostRequirements": { "cpus": 4 }, "postCreateCommands": "typo", "service": "app" }"#,
        );
        let keys: Vec<&str> = found
            .iter()
            .map(|w| w.split([' ', ':']).next().unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "service",
                "portsAttributes",
                "otherPortsAttributes",
                "build.options",
                "build.cacheFrom",
                "postCreateCommands"
            ],
            "{found:?}"
        );
        assert_eq!(
            found[5],
            "postCreateCommands is not a devcontainer.json property and was ignored"
        );
    }

    #[test]
    fn no_warning_for_what_other_parts_read_nor_for_tool_settings() {
        let found = warnings(
            r#"{ "features": {}, "overrideFeatureInstallOrder": [], "overrideCommand": false, "shutdownAction": "none",
                 "init": true, "waitFor": "postCreateCommand", "userEnvProbe": "none", "updateRemoteUserUID": false,
                 "postAttachCommand": "true", "customizations": { "vscode": {} }, "extensions": [], "settings": {},
                 "secrets": {}, "$schema": "s", "forwardPorts": null }"#,
        );
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_compose_config_has_no_warning_of_its_own() {
        let found =
            warnings(r#"{ "dockerComposeFile": "c.yml", "service": "app", "runServices": [] }"#);
        assert!(found.is_empty(), "{found:?}");
    }
}
