//! Warm pool members and the sessions that claim them, told apart by name: a container's
//! labels cannot change after it is made, its name can. A member is made as `wp-…` with the
//! `pool` label; a session claims it by renaming it to the session's own container name
//! (`ws-<session>-<8 hex>`), which the engine gives to one container only.

/// The name prefix of a session's container.
pub const SESSION_PREFIX: &str = "ws-";
/// The name prefix of a pool member no session has claimed.
pub const MEMBER_PREFIX: &str = "wp-";

/// A new member's name: unique, and marked with the base directory's tag.
pub fn member_name(base_tag: &str) -> String {
    let unique = uuid::Uuid::new_v4().simple().to_string();
    format!("{MEMBER_PREFIX}{base_tag}-{}", &unique[..12])
}

/// The session a container named `name` belongs to, when it is a session's container name.
pub fn claimed_session(name: &str) -> Option<&str> {
    let rest = name.strip_prefix(SESSION_PREFIX)?;
    let (session, tag) = rest.rsplit_once('-')?;
    let tag_ok = tag.len() == 8 && tag.bytes().all(|b| b.is_ascii_hexdigit());
    (tag_ok && !session.is_empty()).then_some(session)
}

/// Whether a container named `name` whose pool label is `pool` is a pool member still
/// unclaimed. An empty label is no member's: a container made from a checkpoint image
/// inherits the label a commit kept, emptied.
pub fn is_unclaimed_member(name: &str, pool: Option<&str>) -> bool {
    pool.is_some_and(|p| !p.is_empty()) && claimed_session(name).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_member_is_known_by_its_session_name() {
        assert_eq!(claimed_session("ws-s1-0123abcd"), Some("s1"));
        assert_eq!(claimed_session("ws-a-b-c-0123abcd"), Some("a-b-c"));
        assert_eq!(claimed_session(&member_name("0123abcd")), None);
        assert_eq!(claimed_session("ws-s1-xyz"), None);
        assert_eq!(claimed_session("ws--0123abcd"), None);
        assert!(is_unclaimed_member("wp-0123abcd-aaaa", Some("key")));
        assert!(!is_unclaimed_member("ws-s1-0123abcd", Some("key")));
        assert!(!is_unclaimed_member("wp-x", None));
        assert!(!is_unclaimed_member("ws-s1-from-a-checkpoint", Some("")));
    }
}
