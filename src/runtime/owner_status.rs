//! Whether the process that created a container still lives, judged from its labels: the
//! pid alone can be reused, so the process start time and the boot id must match too.

use std::collections::HashMap;

use super::labels;
use super::owner::{process_start, OwnerIdentity};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerStatus {
    Alive,
    Gone,
    /// Created on another host, or with labels this check cannot read: never reaped.
    Unknown,
}

pub fn owner_status(container_labels: &HashMap<String, String>, me: &OwnerIdentity) -> OwnerStatus {
    let label = |key: &str| container_labels.get(key).map(String::as_str).unwrap_or("");
    let host = label(labels::OWNER_HOST);
    let boot = label(labels::OWNER_BOOT_ID);
    let Ok(pid) = label(labels::OWNER_PID).parse::<u32>() else {
        return OwnerStatus::Unknown;
    };
    if host.is_empty() || host != me.host || me.boot_id.is_empty() {
        return OwnerStatus::Unknown;
    }
    if boot != me.boot_id {
        // Same host, another boot: every process of that boot is gone.
        return OwnerStatus::Gone;
    }
    match process_start(pid) {
        Some(start) if start == label(labels::OWNER_START) => OwnerStatus::Alive,
        _ => OwnerStatus::Gone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels_of(owner: &OwnerIdentity) -> HashMap<String, String> {
        labels::owner_labels(owner)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = OwnerIdentity::current();
        assert_eq!(owner_status(&labels_of(me), me), OwnerStatus::Alive);
        let mut reused = labels_of(me);
        reused.insert(labels::OWNER_START.to_string(), "1".to_string());
        assert_eq!(owner_status(&reused, me), OwnerStatus::Gone);
    }

    #[test]
    fn other_boots_are_gone_and_other_hosts_unknown() {
        let me = OwnerIdentity::current();
        let mut rebooted = labels_of(me);
        rebooted.insert(
            labels::OWNER_BOOT_ID.to_string(),
            "another-boot".to_string(),
        );
        assert_eq!(owner_status(&rebooted, me), OwnerStatus::Gone);
        let mut elsewhere = labels_of(me);
        elsewhere.insert(labels::OWNER_HOST.to_string(), "other-host".to_string());
        assert_eq!(owner_status(&elsewhere, me), OwnerStatus::Unknown);
        assert_eq!(owner_status(&HashMap::new(), me), OwnerStatus::Unknown);
    }
}
