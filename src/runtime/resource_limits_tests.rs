use super::*;
use crate::error::ErrorCode;

fn numbers(pids: f64, memory: f64, cpus: f64, nofile: f64) -> ResourceNumbers {
    ResourceNumbers {
        pids: Some(pids),
        memory: Some(memory),
        cpus: Some(cpus),
        nofile: Some(nofile),
    }
}

#[test]
fn numbers_become_engine_units() {
    let limits = numbers(512.0, (64 << 20) as f64, 1.5, 1024.0)
        .parse("resources")
        .unwrap();
    assert_eq!(
        limits,
        ResourceLimits {
            pids: Some(512),
            memory: Some(64 << 20),
            nano_cpus: Some(1_500_000_000),
            nofile: Some(1024),
        }
    );
    assert_eq!(limits.cpus(), Some(1.5));
    assert!(ResourceNumbers::default().parse("r").unwrap().is_empty());
}

#[test]
fn non_integers_zero_negative_and_absurd_values_are_invalid() {
    let good = numbers(64.0, (8 << 20) as f64, 0.5, 256.0);
    let bad = [
        ResourceNumbers {
            pids: Some(1.5),
            ..good
        },
        ResourceNumbers {
            pids: Some(0.0),
            ..good
        },
        ResourceNumbers {
            pids: Some(-1.0),
            ..good
        },
        ResourceNumbers {
            pids: Some(f64::NAN),
            ..good
        },
        ResourceNumbers {
            memory: Some((5 << 20) as f64),
            ..good
        },
        ResourceNumbers {
            memory: Some(1e300),
            ..good
        },
        ResourceNumbers {
            cpus: Some(0.0),
            ..good
        },
        ResourceNumbers {
            cpus: Some(0.001),
            ..good
        },
        ResourceNumbers {
            cpus: Some(f64::INFINITY),
            ..good
        },
        ResourceNumbers {
            nofile: Some(0.0),
            ..good
        },
        ResourceNumbers {
            nofile: Some(1e9),
            ..good
        },
    ];
    assert!(good.parse("resources").is_ok());
    for numbers in bad {
        let err = numbers.parse("resources").unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{numbers:?}");
        assert!(err.message.starts_with("resources."), "{}", err.message);
    }
}

#[test]
fn a_session_overrides_the_default_field_by_field() {
    let default = ResourceLimits {
        pids: Some(100),
        memory: Some(1 << 30),
        ..Default::default()
    };
    let session = ResourceLimits {
        memory: Some(1 << 28),
        nofile: Some(64),
        ..Default::default()
    };
    assert_eq!(
        session.over(default),
        ResourceLimits {
            pids: Some(100),
            memory: Some(1 << 28),
            nano_cpus: None,
            nofile: Some(64),
        }
    );
}

#[test]
fn the_engine_gets_every_limit_and_no_swap() {
    let mut host = HostConfig::default();
    ResourceLimits {
        pids: Some(4096),
        memory: Some(128 << 20),
        nano_cpus: Some(250_000_000),
        nofile: Some(2048),
    }
    .apply(&mut host);
    assert_eq!(host.pids_limit, Some(4096));
    assert_eq!(
        (host.memory, host.memory_swap),
        (Some(128 << 20), Some(128 << 20))
    );
    assert_eq!(host.nano_cpus, Some(250_000_000));
    let ulimit = &host.ulimits.unwrap()[0];
    assert_eq!(
        (ulimit.name.as_deref(), ulimit.soft, ulimit.hard),
        (Some("nofile"), Some(2048), Some(2048))
    );
    let mut untouched = HostConfig::default();
    ResourceLimits::default().apply(&mut untouched);
    assert_eq!(untouched, HostConfig::default());
}

#[test]
fn the_default_pids_limit_leaves_seven_eighths_of_the_process_table() {
    assert_eq!(default_pids_limit(Some(32768)), 4096);
    assert_eq!(default_pids_limit(Some(4_194_304)), 4096);
    assert_eq!(default_pids_limit(Some(16384)), 2048);
    assert_eq!(default_pids_limit(None), 4096);
    assert_eq!(default_pids_limit(Some(0)), 4096);
    assert_eq!(default_pids_limit(Some(40)), MIN_PIDS);
    assert!(host_pid_max().is_some_and(|m| m > 0));
}

#[test]
fn limits_kept_with_a_session_read_back_and_old_records_have_none() {
    let limits = ResourceLimits {
        pids: Some(4096),
        ..Default::default()
    };
    let text = serde_json::to_string(&limits).unwrap();
    assert_eq!(text, r#"{"pids":4096}"#);
    assert_eq!(
        serde_json::from_str::<ResourceLimits>(&text).unwrap(),
        limits
    );
    assert!(serde_json::from_str::<ResourceLimits>("{}")
        .unwrap()
        .is_empty());
}

#[test]
fn podman_gets_nproc_beside_nofile_and_nothing_else_changes() {
    let mut host = HostConfig::default();
    podman_nproc(&mut host, Some(32768));
    assert_eq!(host.ulimits, None);
    ResourceLimits {
        nofile: Some(64),
        ..Default::default()
    }
    .apply(&mut host);
    podman_nproc(&mut host, Some(32768));
    let names: Vec<_> = host
        .ulimits
        .as_ref()
        .unwrap()
        .iter()
        .map(|u| (u.name.clone().unwrap(), u.hard))
        .collect();
    assert_eq!(
        names,
        [
            ("nofile".to_string(), Some(64)),
            ("nproc".into(), Some(32768))
        ]
    );
}
