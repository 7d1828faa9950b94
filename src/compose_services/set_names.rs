//! The engine names of a set's containers and volumes, all derived from the session
//! container's name: the holder `<container>-svc`, a service `<container>-svc-<service>`, a
//! named volume `<container>-svc-<volume>` (apart from the session's own
//! `<container>-workspace`).

use crate::error::Result;
use crate::runtime::validate_name;

pub fn holder_name(container: &str) -> String {
    format!("{container}-svc")
}

pub fn service_container_name(container: &str, service: &str) -> String {
    format!("{container}-svc-{service}")
}

pub fn volume_name(container: &str, volume: &str) -> String {
    format!("{container}-svc-{volume}")
}

/// Whether `name` (a service or volume of the compose file) makes valid engine names and a
/// host name the hosts file can carry: the engine's own rule for names.
pub fn check_part(container: &str, name: &str) -> Result<()> {
    validate_name(name)?;
    validate_name(&service_container_name(container, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_session_container() {
        assert_eq!(holder_name("ws-s1"), "ws-s1-svc");
        assert_eq!(service_container_name("ws-s1", "db"), "ws-s1-svc-db");
        assert_eq!(volume_name("ws-s1", "data"), "ws-s1-svc-data");
        assert!(check_part("ws-s1", "db.1_x-y").is_ok());
        for bad in ["", "-db", "a b", "a/b", "db:5432"] {
            assert!(check_part("ws-s1", bad).is_err(), "{bad}");
        }
        assert!(check_part(&"c".repeat(120), "database").is_err());
    }
}
