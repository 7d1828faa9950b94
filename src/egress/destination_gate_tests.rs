//! "localhost" stands for any name: looked up, it resolves (from /etc/hosts, no DNS) to a
//! loopback address, which the decision refuses saying so; not looked up, the refusal
//! names the policy instead.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::egress::egress_settings::{AskFuture, Egress, EgressAsker, EgressSpec};

struct Asker {
    asked: AtomicUsize,
    yes: bool,
}

impl EgressAsker for Asker {
    fn ask(&self, _: EgressRequest) -> AskFuture {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let yes = self.yes;
        Box::pin(async move { yes })
    }
}

fn gate(mode: EgressMode, allow: &[&str], asker: Option<Arc<Asker>>) -> Gate {
    let spec = EgressSpec {
        mode,
        allow: allow.iter().map(|s| s.to_string()).collect(),
        hosts: [("pinned.test".to_string(), vec!["127.0.0.1".to_string()])].into(),
        ..Default::default()
    };
    let egress = Egress {
        spec,
        asker: asker.map(|a| a as Arc<dyn EgressAsker>),
        events: None,
    };
    Gate::new("s", egress.compile().unwrap(), Default::default())
}

async fn refusal(gate: &Gate, host: &str, port: u16) -> String {
    match gate.check(host, port).await {
        Err(Denied::Refused(reason)) => reason,
        Err(Denied::Unresolved(reason)) => panic!("unresolved: {reason}"),
        Ok(_) => panic!("{host}:{port} cleared"),
    }
}

const LOOKED_UP: &str = "127.0.0.1 is a loopback address";
const NOT_LISTED: &str = "not in the allow list (and no onRequest to ask)";

#[tokio::test]
async fn a_name_no_allow_entry_could_match_is_refused_without_a_lookup() {
    let names = gate(EgressMode::Policy, &["allowed.test", "*.ok.test"], None);
    assert_eq!(refusal(&names, "localhost", 80).await, NOT_LISTED);
    let long = format!("{}.exfil.test", "x".repeat(63));
    assert_eq!(refusal(&names, &long, 80).await, NOT_LISTED);
    let ported = gate(EgressMode::Policy, &["localhost:443"], None);
    assert_eq!(refusal(&ported, "localhost", 80).await, NOT_LISTED);
    assert!(refusal(&ported, "localhost", 443)
        .await
        .starts_with(LOOKED_UP));
}

#[tokio::test]
async fn patterns_address_entries_and_public_still_look_names_up() {
    for (mode, allow) in [
        (EgressMode::Policy, &["*.localhost", "localhost"][..]),
        (EgressMode::Policy, &["203.0.113.0/24"]),
        (EgressMode::Policy, &["*"]),
        (EgressMode::Public, &[]),
    ] {
        let gate = gate(mode, allow, None);
        assert!(
            refusal(&gate, "localhost", 80).await.starts_with(LOOKED_UP),
            "{allow:?}"
        );
    }
    let other_port = gate(EgressMode::Policy, &["203.0.113.0/24:443"], None);
    assert_eq!(refusal(&other_port, "localhost", 80).await, NOT_LISTED);
}

#[tokio::test]
async fn on_request_is_asked_before_the_lookup_and_pins_need_none() {
    let no = Arc::new(Asker {
        asked: AtomicUsize::new(0),
        yes: false,
    });
    let refusing = gate(EgressMode::Policy, &[], Some(no.clone()));
    assert_eq!(
        refusal(&refusing, "localhost", 80).await,
        "onRequest did not allow it"
    );
    assert_eq!(no.asked.load(Ordering::SeqCst), 1);
    let yes = Arc::new(Asker {
        asked: AtomicUsize::new(0),
        yes: true,
    });
    let approving = gate(EgressMode::Policy, &[], Some(yes.clone()));
    assert!(refusal(&approving, "localhost", 80)
        .await
        .starts_with(LOOKED_UP));
    assert_eq!(yes.asked.load(Ordering::SeqCst), 1);
    // A pinned name is no lookup: refused for its address before anyone is asked.
    let pinned = gate(EgressMode::Policy, &[], Some(no.clone()));
    assert!(refusal(&pinned, "pinned.test", 80)
        .await
        .starts_with(LOOKED_UP));
    assert_eq!(no.asked.load(Ordering::SeqCst), 1);
}

struct SilentAsker;

impl EgressAsker for SilentAsker {
    fn ask(&self, _: EgressRequest) -> AskFuture {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn an_on_request_silent_past_ask_timeout_ms_means_no_and_the_default_wait_is_30_s() {
    let egress = |ask_timeout_ms| Egress {
        spec: EgressSpec {
            mode: EgressMode::Policy,
            ask_timeout_ms,
            ..Default::default()
        },
        asker: Some(Arc::new(SilentAsker) as Arc<dyn EgressAsker>),
        events: None,
    };
    let default = egress(None).compile().unwrap();
    assert_eq!(default.ask_wait, std::time::Duration::from_secs(30));
    let quick = Gate::new("s", egress(Some(50)).compile().unwrap(), Default::default());
    let started = std::time::Instant::now();
    assert_eq!(
        refusal(&quick, "localhost", 80).await,
        "onRequest did not allow it"
    );
    assert!(started.elapsed() >= std::time::Duration::from_millis(50));
}

#[tokio::test]
async fn a_request_over_an_open_connection_is_decided_on_its_address_without_a_lookup() {
    let public: SocketAddr = "203.0.113.7:80".parse().unwrap();
    let allowed = gate(EgressMode::Policy, &["localhost"], None);
    let cleared = match allowed.recheck("localhost", 80, public).await {
        Ok(cleared) => cleared,
        Err(_) => panic!("the open connection's address was not cleared"),
    };
    assert_eq!(cleared.addresses, vec![public], "no lookup replaced it");
    let loopback: SocketAddr = "127.0.0.1:80".parse().unwrap();
    assert!(matches!(
        allowed.recheck("localhost", 80, loopback).await,
        Err(Denied::Refused(reason)) if reason.starts_with(LOOKED_UP)
    ));
    let none = gate(EgressMode::None, &[], None);
    assert!(matches!(
        none.recheck("localhost", 80, public).await,
        Err(Denied::Refused(_))
    ));
}

#[tokio::test]
async fn a_gateway_refused_always_stays_refused_where_an_allow_entry_names_it() {
    let allow = ["127.0.0.2/32", "127.0.0.3/32"];
    let spec = EgressSpec {
        mode: EgressMode::Policy,
        allow: allow.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let policy = || Egress::of(spec.clone()).compile().unwrap();
    let gateways = |always| Gateways {
        addresses: vec!["127.0.0.2".parse().unwrap()],
        what: "the cluster's API server",
        always,
    };
    let cluster = Gate::new("s", policy(), gateways(true));
    assert_eq!(
        refusal(&cluster, "127.0.0.2", 6443).await,
        "127.0.0.2 is the cluster's API server, refused whatever the policy"
    );
    assert!(cluster.check("127.0.0.3", 6443).await.is_ok());
    let engine = Gate::new("s", policy(), gateways(false));
    assert!(engine.check("127.0.0.2", 6443).await.is_ok());
}
