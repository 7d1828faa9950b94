//! Which services a session starts, and in what order: `runServices` (when not empty) and
//! `service`, else every service whose profiles are active (none without `COMPOSE_PROFILES`)
//! and `service`; then everything they depend on. As compose, a service named is started
//! whatever its profiles, but what it depends on must be active (or named too): a required
//! dependency that is not is refused, one with `required: false` left out with a warning.
//! Dependencies come first (ties in file order); a cycle is refused, naming it.

use std::collections::BTreeSet;

/// What selection needs of one service.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceNode {
    pub name: String,
    pub profiles: Vec<String>,
    /// `depends_on` (name, required), then a `network_mode: service:` target.
    pub depends_on: Vec<(String, bool)>,
}

pub struct Selected {
    /// Dependencies first.
    pub order: Vec<String>,
    pub warnings: Vec<String>,
}

/// `Err` says which name is unknown or which cycle there is.
pub fn select_services(
    nodes: &[ServiceNode],
    run_services: &[String],
    service: &str,
    active_profiles: &[String],
) -> Result<Selected, String> {
    let find = |name: &str| nodes.iter().find(|n| n.name == name);
    let all = active_profiles.iter().any(|p| p == "*");
    let active = |n: &ServiceNode| {
        n.profiles.is_empty() || all || n.profiles.iter().any(|p| active_profiles.contains(p))
    };
    let mut targets: Vec<&str> = Vec::new();
    if run_services.is_empty() {
        targets.extend(nodes.iter().filter(|n| active(n)).map(|n| n.name.as_str()));
    } else {
        for name in run_services {
            if find(name).is_none() {
                return Err(format!(
                    "runServices names '{name}', which the compose files do not define"
                ));
            }
            targets.push(name);
        }
    }
    if find(service).is_none() {
        return Err(format!(
            "service '{service}' is not a service of the compose files"
        ));
    }
    if !targets.contains(&service) {
        targets.push(service);
    }
    // In file order, so that the order does not depend on how runServices lists them.
    targets.sort_by_key(|t| nodes.iter().position(|n| n.name == *t));
    let available: BTreeSet<&str> = nodes
        .iter()
        .filter(|n| active(n) || targets.contains(&n.name.as_str()))
        .map(|n| n.name.as_str())
        .collect();
    let mut walk = Walk {
        nodes,
        available,
        order: Vec::new(),
        done: BTreeSet::new(),
        stack: Vec::new(),
        warnings: Vec::new(),
    };
    for target in targets {
        walk.visit(target)?;
    }
    Ok(Selected {
        order: walk.order,
        warnings: walk.warnings,
    })
}

struct Walk<'a> {
    nodes: &'a [ServiceNode],
    /// Services whose profiles are active, and those named.
    available: BTreeSet<&'a str>,
    order: Vec<String>,
    done: BTreeSet<String>,
    stack: Vec<String>,
    warnings: Vec<String>,
}

impl Walk<'_> {
    fn visit(&mut self, name: &str) -> Result<(), String> {
        if self.done.contains(name) {
            return Ok(());
        }
        if let Some(at) = self.stack.iter().position(|s| s == name) {
            let mut cycle = self.stack[at..].to_vec();
            cycle.push(name.to_string());
            return Err(format!("depends_on makes a cycle: {}", cycle.join(" → ")));
        }
        let node = self
            .nodes
            .iter()
            .find(|n| n.name == name)
            .expect("visited names exist");
        self.stack.push(name.to_string());
        for (dependency, required) in &node.depends_on {
            let why = match self.nodes.iter().find(|n| &n.name == dependency) {
                Some(_) if self.available.contains(dependency.as_str()) => {
                    self.visit(dependency)?;
                    continue;
                }
                Some(other) => format!(
                    "which is under the profiles {} (none of them active: COMPOSE_PROFILES, or name it in runServices)",
                    other.profiles.join(", ")
                ),
                None => "which the compose files do not define".to_string(),
            };
            if *required {
                return Err(format!("service '{name}' depends on '{dependency}', {why}"));
            }
            self.warnings.push(format!(
                "compose: service '{name}' depends on '{dependency}' (required: false), {why}; it is left out"
            ));
        }
        self.stack.pop();
        self.done.insert(name.to_string());
        self.order.push(name.to_string());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, profiles: &[&str], deps: &[&str]) -> ServiceNode {
        ServiceNode {
            name: name.into(),
            profiles: profiles.iter().map(|p| p.to_string()).collect(),
            depends_on: deps.iter().map(|d| (d.to_string(), true)).collect(),
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn order(nodes: &[ServiceNode], run: &[&str], service: &str, profiles: &[&str]) -> Vec<String> {
        select_services(nodes, &strings(run), service, &strings(profiles))
            .unwrap()
            .order
    }

    #[test]
    fn dependencies_first_in_file_order() {
        let nodes = [
            node("app", &[], &["db", "cache"]),
            node("cache", &[], &[]),
            node("db", &[], &["migrate"]),
            node("migrate", &["tools"], &[]),
            node("debug", &["debug"], &[]),
            node("extra", &[], &[]),
        ];
        assert_eq!(
            order(&nodes, &[], "app", &["tools"]),
            ["migrate", "db", "cache", "app", "extra"]
        );
        assert_eq!(
            order(&nodes, &[], "app", &["debug", "tools"]),
            ["migrate", "db", "cache", "app", "debug", "extra"]
        );
        assert_eq!(
            order(&nodes, &[], "app", &["*"]),
            ["migrate", "db", "cache", "app", "debug", "extra"]
        );
        assert_eq!(
            order(&nodes, &["cache", "migrate"], "app", &[]),
            ["migrate", "db", "cache", "app"]
        );
        assert_eq!(order(&nodes, &["extra"], "debug", &[]), ["debug", "extra"]);
        // A service named starts whatever its profiles; what it depends on must be active.
        let inactive = select_services(&nodes, &[], "app", &[]).err().unwrap();
        assert!(
            inactive.contains("'db' depends on 'migrate', which is under the profiles tools"),
            "{inactive}"
        );
    }

    #[test]
    fn unknown_names_and_cycles_are_refused() {
        let nodes = [
            node("a", &[], &["b"]),
            node("b", &[], &["c"]),
            node("c", &[], &["a"]),
            node("d", &[], &["nope"]),
        ];
        let cycle = select_services(&nodes, &strings(&["a"]), "a", &[])
            .err()
            .unwrap();
        assert_eq!(cycle, "depends_on makes a cycle: a → b → c → a");
        let missing = select_services(&nodes, &strings(&["d"]), "d", &[])
            .err()
            .unwrap();
        assert!(missing.contains("'d' depends on 'nope'"), "{missing}");
        assert!(select_services(&nodes, &strings(&["x"]), "a", &[]).is_err());
        assert!(select_services(&nodes, &[], "x", &[]).is_err());
        let optional = [ServiceNode {
            name: "a".into(),
            profiles: vec![],
            depends_on: vec![("gone".into(), false)],
        }];
        let selected = select_services(&optional, &[], "a", &[]).unwrap();
        assert_eq!(selected.order, ["a"]);
        assert!(selected.warnings[0].contains("'gone'"));
    }
}
