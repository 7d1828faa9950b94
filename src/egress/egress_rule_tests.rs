use super::*;

fn rule(text: &str) -> Rule {
    Rule::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

#[test]
fn every_form_of_the_grammar_parses() {
    assert_eq!(rule("*").target, Target::Any);
    assert_eq!(rule("*:443").port, Some(443));
    assert_eq!(
        rule("Example.COM.").target,
        Target::Name("example.com".into())
    );
    assert_eq!(rule("example.com:443").port, Some(443));
    assert_eq!(
        rule("*.example.com").target,
        Target::Suffix("example.com".into())
    );
    assert_eq!(rule("*.example.com:8080").port, Some(8080));
    assert_eq!(
        rule("203.0.113.7").target,
        Target::Net {
            addr: ip("203.0.113.7"),
            prefix: 32
        }
    );
    assert_eq!(rule("203.0.113.7:5432").port, Some(5432));
    assert_eq!(
        rule("203.0.113.0/24").target,
        Target::Net {
            addr: ip("203.0.113.0"),
            prefix: 24
        }
    );
    assert_eq!(rule("203.0.113.0/24:443").port, Some(443));
    assert_eq!(
        rule("::1").target,
        Target::Net {
            addr: ip("::1"),
            prefix: 128
        }
    );
    assert_eq!(rule("[::1]:443").port, Some(443));
    assert_eq!(
        rule("fc00::/7").target,
        Target::Net {
            addr: ip("fc00::"),
            prefix: 7
        }
    );
    assert_eq!(rule("[fc00::/7]:443").port, Some(443));
    assert!(rule("2001:db8::/32").is_address_rule());
}

#[test]
fn malformed_entries_are_refused_with_a_reason() {
    for bad in [
        "",
        " ",
        "a*.com",
        "x.*.com",
        "*x",
        "example.com:0",
        "example.com:65536",
        "example.com:http",
        "10.0.0.1/8",
        "10.0.0.0/33",
        "::/129",
        "2130706433",
        "0177.0.0.1",
        "1.2.3",
        "[::1",
        "[::1]x",
        "exa mple.com",
        "-",
        "a..b",
    ] {
        assert!(Rule::parse(bad).is_err(), "{bad:?} parsed");
    }
    assert!(Rule::parse("10.0.0.1/8")
        .unwrap_err()
        .contains("10.0.0.0/8"));
    assert!(Rule::parse("2130706433").unwrap_err().contains("numeric"));
}

#[test]
fn names_match_exactly_or_below_a_wildcard() {
    assert!(rule("example.com").matches_name("EXAMPLE.com.", 80));
    assert!(!rule("example.com").matches_name("www.example.com", 80));
    assert!(rule("*.example.com").matches_name("a.b.example.com", 1));
    assert!(!rule("*.example.com").matches_name("example.com", 1));
    assert!(!rule("*.example.com").matches_name("badexample.com", 1));
    assert!(!rule("example.com:443").matches_name("example.com", 80));
    assert!(rule("*").matches_name("203.0.113.5", 22));
    assert!(!rule("203.0.113.5").matches_name("203.0.113.5", 22));
}

#[test]
fn addresses_are_covered_by_ranges_across_mapped_forms() {
    assert!(rule("10.0.0.0/8").covers_address(ip("10.1.2.3"), 80));
    assert!(rule("10.0.0.0/8").covers_address(ip("::ffff:10.0.0.1"), 80));
    assert!(!rule("10.0.0.0/8:5432").covers_address(ip("10.1.2.3"), 80));
    assert!(rule("::ffff:0:0/96").covers_address(ip("127.0.0.1"), 80));
    assert!(!rule("fc00::/7").covers_address(ip("10.0.0.1"), 80));
    assert!(rule("fc00::/7").covers_address(ip("fd12::1"), 80));
    assert!(rule("0.0.0.0/0").covers_address(ip("8.8.8.8"), 80));
    assert!(!rule("example.com").covers_address(ip("8.8.8.8"), 80));
}
