//! The order features are installed in, by the spec's round-based algorithm: in each
//! round every feature whose `dependsOn` (hard) and present `installsAfter` (soft)
//! features are all installed is a candidate; of those, only the ones with the highest
//! `overrideFeatureInstallOrder` priority are installed in that round, sorted by their key
//! so the order is stable. A round without candidates is a cycle.

use std::collections::BTreeSet;

/// One feature to place.
#[derive(Debug, Clone, Default)]
pub struct OrderNode {
    /// Sorts candidates of a round (a reference with its options).
    pub key: String,
    /// The names `installsAfter` and `overrideFeatureInstallOrder` may use for it.
    pub names: Vec<String>,
    /// Indices of the features it depends on.
    pub depends_on: Vec<usize>,
    pub installs_after: Vec<String>,
}

/// Indices of `nodes` in install order, or the keys of the features in a cycle.
pub fn install_order(nodes: &[OrderNode], overrides: &[String]) -> Result<Vec<usize>, Vec<String>> {
    let named = |name: &str, me: usize| -> Vec<usize> {
        (0..nodes.len())
            .filter(|&j| j != me && nodes[j].names.iter().any(|n| n == name))
            .collect()
    };
    let after: Vec<Vec<usize>> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let soft = n.installs_after.iter().flat_map(|name| named(name, i));
            n.depends_on.iter().copied().chain(soft).collect()
        })
        .collect();
    let priority: Vec<usize> = nodes
        .iter()
        .map(|n| {
            overrides
                .iter()
                .position(|o| n.names.iter().any(|name| name == o))
                .map_or(0, |p| overrides.len() - p)
        })
        .collect();
    let mut installed = BTreeSet::new();
    let mut order = Vec::with_capacity(nodes.len());
    while order.len() < nodes.len() {
        let candidates: Vec<usize> = (0..nodes.len())
            .filter(|i| !installed.contains(i) && after[*i].iter().all(|d| installed.contains(d)))
            .collect();
        let Some(top) = candidates.iter().map(|&i| priority[i]).max() else {
            let mut stuck: Vec<String> = (0..nodes.len())
                .filter(|i| !installed.contains(i))
                .map(|i| nodes[i].key.clone())
                .collect();
            stuck.sort();
            return Err(stuck);
        };
        let mut round: Vec<usize> = candidates
            .into_iter()
            .filter(|&i| priority[i] == top)
            .collect();
        round.sort_by(|a, b| nodes[*a].key.cmp(&nodes[*b].key));
        installed.extend(round.iter().copied());
        order.extend(round);
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, depends_on: &[usize], installs_after: &[&str]) -> OrderNode {
        OrderNode {
            key: name.to_string(),
            names: vec![name.to_string()],
            depends_on: depends_on.to_vec(),
            installs_after: installs_after.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn keys(nodes: &[OrderNode], order: &[usize]) -> Vec<String> {
        order.iter().map(|&i| nodes[i].key.clone()).collect()
    }

    #[test]
    fn without_constraints_the_order_is_by_key() {
        let nodes = [
            node("c", &[], &[]),
            node("a", &[], &[]),
            node("b", &[], &[]),
        ];
        assert_eq!(
            keys(&nodes, &install_order(&nodes, &[]).unwrap()),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn depends_on_and_installs_after_come_first() {
        // a depends on z; b installs after a; c installs after a feature that is absent.
        let nodes = [
            node("a", &[3], &[]),
            node("b", &[], &["a"]),
            node("c", &[], &["missing"]),
            node("z", &[], &[]),
        ];
        assert_eq!(
            keys(&nodes, &install_order(&nodes, &[]).unwrap()),
            ["c", "z", "a", "b"]
        );
    }

    #[test]
    fn the_override_wins_within_what_dependencies_allow() {
        let nodes = [
            node("a", &[], &[]),
            node("b", &[], &[]),
            node("c", &[], &["b"]),
        ];
        let order = install_order(&nodes, &["c".into(), "b".into()]).unwrap();
        // c must wait for b, but b (second priority) goes before a (none).
        assert_eq!(keys(&nodes, &order), ["b", "c", "a"]);
        let order = install_order(&nodes, &["a".into()]).unwrap();
        assert_eq!(keys(&nodes, &order), ["a", "b", "c"]);
    }

    #[test]
    fn a_cycle_names_its_features() {
        let nodes = [
            node("a", &[1], &[]),
            node("b", &[], &["a"]),
            node("c", &[], &[]),
        ];
        assert_eq!(install_order(&nodes, &[]).unwrap_err(), ["a", "b"]);
    }
}
