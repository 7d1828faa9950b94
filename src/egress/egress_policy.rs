//! The decision for one destination under a policy's lists: a deny by name or address
//! wins, every address must be public or opened by an address entry, then an allow entry
//! decides, and what is left is the host's to answer.

use std::net::IpAddr;

use super::egress_rule::Rule;
use super::host_names::engine_host_name;

#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub allow: Vec<Rule>,
    pub deny: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Refuse(String),
    Ask,
}

impl Rules {
    pub fn parse(allow: &[String], deny: &[String]) -> Result<Rules, String> {
        let all = |texts: &[String]| {
            texts
                .iter()
                .map(|t| Rule::parse(t))
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Rules {
            allow: all(allow)?,
            deny: all(deny)?,
        })
    }

    /// `'public'`: any public destination.
    pub fn public() -> Rules {
        Rules {
            allow: vec![Rule::parse("*").expect("'*' is an entry")],
            deny: Vec::new(),
        }
    }

    /// A deny entry that names `host` as asked, before anything is resolved.
    pub fn denies_name(&self, host: &str, port: u16) -> Option<String> {
        self.deny
            .iter()
            .find(|r| r.matches_name(host, port))
            .map(|r| format!("denied by '{}'", r.text))
    }

    /// Why `host` is refused by its name alone, before anything is resolved: a deny entry
    /// names it, or it is an engine's name for the host that no allow entry names exactly.
    pub fn refuses_name(&self, host: &str, port: u16) -> Option<String> {
        if let Some(reason) = self.denies_name(host, port) {
            return Some(reason);
        }
        let kind = engine_host_name(host)?;
        let opened = self.allow.iter().any(|r| r.names_exactly(host, port));
        (!opened).then(|| format!("'{host}' is {kind}; only an allow entry naming it opens it"))
    }

    /// Whether an allow entry could let `host:port` through once its name is resolved: a
    /// name pattern that fits it, or an address entry whose port fits. When none could, the
    /// name needs no lookup (nor may it have one: a lookup carries the name to DNS).
    pub fn lookup_could_allow(&self, host: &str, port: u16) -> bool {
        self.allow
            .iter()
            .any(|r| r.matches_name(host, port) || (r.is_address_rule() && r.port_matches(port)))
    }

    pub fn decide(
        &self,
        host: &str,
        port: u16,
        addrs: &[IpAddr],
        special: &dyn Fn(IpAddr) -> Option<String>,
    ) -> Decision {
        if let Some(reason) = self.refuses_name(host, port) {
            return Decision::Refuse(reason);
        }
        for addr in addrs {
            if let Some(rule) = self.deny.iter().find(|r| r.covers_address(*addr, port)) {
                return Decision::Refuse(format!("{addr} is denied by '{}'", rule.text));
            }
        }
        if addrs.is_empty() {
            return Decision::Refuse(format!("'{host}' has no address"));
        }
        let opened = |addr: IpAddr| self.allow.iter().any(|r| r.covers_address(addr, port));
        for addr in addrs {
            if let Some(kind) = special(*addr).filter(|_| !opened(*addr)) {
                let kind = kind.replace(['\r', '\n'], " ");
                return Decision::Refuse(format!(
                    "{addr} is {kind}; only an allow entry naming that address or range opens it"
                ));
            }
        }
        let by_name = self.allow.iter().any(|r| r.matches_name(host, port));
        if by_name || addrs.iter().all(|a| opened(*a)) {
            return Decision::Allow;
        }
        Decision::Ask
    }
}

#[cfg(test)]
mod tests {

    use super::super::address_class::special_kind;
    use super::*;

    fn rules(allow: &[&str], deny: &[&str]) -> Rules {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Rules::parse(&owned(allow), &owned(deny)).unwrap()
    }

    fn decide(rules: &Rules, host: &str, port: u16, addrs: &[&str]) -> Decision {
        let addrs: Vec<IpAddr> = addrs.iter().map(|a| a.parse().unwrap()).collect();
        rules.decide(host, port, &addrs, &|a| special_kind(a).map(str::to_string))
    }

    #[test]
    fn public_reaches_public_addresses_only() {
        let public = Rules::public();
        assert_eq!(
            decide(&public, "dns.google", 443, &["8.8.8.8"]),
            Decision::Allow
        );
        assert!(
            matches!(decide(&public, "127.0.0.1", 80, &["127.0.0.1"]), Decision::Refuse(r) if r.contains("loopback"))
        );
        assert!(matches!(
            decide(&public, "mixed.test", 80, &["8.8.8.8", "10.0.0.1"]),
            Decision::Refuse(_)
        ));
        assert!(matches!(decide(&public, "x", 80, &[]), Decision::Refuse(_)));
    }

    #[test]
    fn a_name_never_opens_a_private_address_and_a_range_does() {
        let by_name = rules(&["*.corp.example"], &[]);
        assert!(
            matches!(decide(&by_name, "db.corp.example", 5432, &["10.1.2.3"]), Decision::Refuse(r) if r.contains("RFC 1918"))
        );
        let with_range = rules(&["*.corp.example", "10.0.0.0/8"], &[]);
        assert_eq!(
            decide(&with_range, "db.corp.example", 5432, &["10.1.2.3"]),
            Decision::Allow
        );
        let range_only = rules(&["10.1.2.3:5432"], &[]);
        assert_eq!(
            decide(&range_only, "10.1.2.3", 5432, &["10.1.2.3"]),
            Decision::Allow
        );
        assert!(matches!(
            decide(&range_only, "10.1.2.3", 22, &["10.1.2.3"]),
            Decision::Refuse(_)
        ));
    }

    #[test]
    fn deny_wins_and_the_rest_is_asked() {
        let r = rules(&["*"], &["evil.example", "203.0.113.0/24"]);
        assert!(
            matches!(decide(&r, "EVIL.example.", 443, &["8.8.8.8"]), Decision::Refuse(x) if x.contains("evil.example"))
        );
        assert!(matches!(
            decide(&r, "fine.example", 443, &["203.0.113.9"]),
            Decision::Refuse(_)
        ));
        assert_eq!(
            r.denies_name("evil.example", 1),
            Some("denied by 'evil.example'".into())
        );
        let open = rules(&["allowed.example"], &[]);
        assert_eq!(
            decide(&open, "other.example", 443, &["8.8.8.8"]),
            Decision::Ask
        );
        assert_eq!(
            decide(&open, "allowed.example", 443, &["8.8.8.8"]),
            Decision::Allow
        );
    }

    #[test]
    fn the_engines_names_for_the_host_are_refused_unless_an_entry_names_one() {
        for host in [
            "host.docker.internal",
            "Gateway.Docker.Internal.",
            "host.containers.internal",
        ] {
            let refused = decide(&Rules::public(), host, 80, &["8.8.8.8"]);
            assert!(
                matches!(&refused, Decision::Refuse(r) if r.contains("name for") && r.contains("allow entry naming it")),
                "{host}: {refused:?}"
            );
            assert!(Rules::public().refuses_name(host, 80).is_some());
        }
        let wildcard = rules(&["*.docker.internal", "*"], &[]);
        assert!(wildcard.refuses_name("host.docker.internal", 80).is_some());
        let named = rules(&["host.docker.internal:8080"], &[]);
        assert!(named.refuses_name("host.docker.internal", 8080).is_none());
        assert!(named.refuses_name("host.docker.internal", 22).is_some());
        // Named, it is still checked by address: the host's own are refused as ever.
        assert!(
            matches!(decide(&named, "host.docker.internal", 8080, &["127.0.0.1"]), Decision::Refuse(r) if r.contains("loopback"))
        );
        assert_eq!(
            decide(&named, "host.docker.internal", 8080, &["8.8.8.8"]),
            Decision::Allow
        );
        assert_eq!(
            Rules::public().refuses_name("docker.internal.example", 80),
            None
        );
    }

    #[test]
    fn only_an_entry_that_could_match_makes_a_name_worth_resolving() {
        let names = rules(&["a.example", "*.b.example:443"], &["*.a.example"]);
        assert!(names.lookup_could_allow("A.example.", 80));
        assert!(names.lookup_could_allow("x.b.example", 443));
        assert!(!names.lookup_could_allow("x.b.example", 80));
        assert!(!names.lookup_could_allow(&format!("{}.exfil.example", "x".repeat(63)), 80));
        let ranges = rules(&["a.example", "203.0.113.0/24:443"], &[]);
        assert!(ranges.lookup_could_allow("anything.example", 443));
        assert!(!ranges.lookup_could_allow("anything.example", 80));
        assert!(Rules::public().lookup_could_allow("anything.example", 1));
        assert!(!rules(&[], &[]).lookup_could_allow("a.example", 80));
    }
}
