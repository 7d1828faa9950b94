//! A container's healthcheck as compose and the Engine API write it: the test
//! (`["CMD", argv…]`, `["CMD-SHELL", "shell text"]` or `["NONE"]`) and its timings, with
//! the engine's defaults where a timing is not given.

use std::time::Duration;

use bollard::models::HealthConfig;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The engine's defaults (Docker's, which Podman shares).
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_RETRIES: u32 = 3;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Healthcheck {
    pub test: Vec<String>,
    pub interval: Option<Duration>,
    pub timeout: Option<Duration>,
    pub retries: Option<u32>,
    pub start_period: Option<Duration>,
}

fn nanos(d: Option<Duration>) -> Option<i64> {
    d.map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

impl Healthcheck {
    /// Rejects a test that is neither `CMD`, `CMD-SHELL` nor `NONE` with what it needs, and
    /// a timing the engine refuses (below 1 ms, other than unset).
    pub fn validate(&self, what: &str) -> Result<()> {
        let bad = |why: &str| Error::invalid_argument(format!("{what}: healthcheck {why}"));
        match self.test.first().map(String::as_str) {
            Some("NONE") => {}
            Some("CMD") if self.test.len() > 1 && !self.test[1].is_empty() => {}
            Some("CMD-SHELL") if self.test.len() == 2 => {}
            _ => {
                return Err(bad(
                    "test must be [\"CMD\", program, args…], [\"CMD-SHELL\", text] or [\"NONE\"]",
                ))
            }
        }
        if self.test.iter().any(|a| a.contains('\0')) {
            return Err(bad("test contains NUL"));
        }
        let short = |d: Option<Duration>| d.is_some_and(|d| d < Duration::from_millis(1));
        if short(self.interval) || short(self.timeout) {
            return Err(bad("interval and timeout must be at least 1 ms"));
        }
        Ok(())
    }

    /// Whether the test turns the image's healthcheck off (`["NONE"]`).
    pub fn disabled(&self) -> bool {
        self.test.first().map(String::as_str) == Some("NONE")
    }

    /// The command an exec runs for one check: `CMD`'s argv, `CMD-SHELL`'s text through
    /// `/bin/sh -c` (as the engine runs it); `None` for `NONE`.
    pub fn command(&self) -> Option<Vec<String>> {
        match self.test.first().map(String::as_str) {
            Some("CMD") => Some(self.test[1..].to_vec()),
            Some("CMD-SHELL") => Some(vec![
                "/bin/sh".into(),
                "-c".into(),
                self.test.get(1).cloned().unwrap_or_default(),
            ]),
            _ => None,
        }
    }

    pub fn interval(&self) -> Duration {
        self.interval.unwrap_or(DEFAULT_INTERVAL)
    }

    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    pub fn retries(&self) -> u32 {
        self.retries.unwrap_or(DEFAULT_RETRIES).max(1)
    }

    pub fn start_period(&self) -> Duration {
        self.start_period.unwrap_or_default()
    }

    /// As the create request carries it (unset timings left to the engine).
    pub fn engine(&self) -> HealthConfig {
        HealthConfig {
            test: Some(self.test.clone()),
            interval: nanos(self.interval),
            timeout: nanos(self.timeout),
            retries: self.retries.map(i64::from),
            start_period: nanos(self.start_period),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(test: &[&str]) -> Healthcheck {
        Healthcheck {
            test: test.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn tests_read_as_the_engine_reads_them() {
        assert_eq!(
            check(&["CMD", "pg_isready", "-q"]).command(),
            Some(vec!["pg_isready".to_string(), "-q".to_string()])
        );
        assert_eq!(
            check(&["CMD-SHELL", "redis-cli ping"]).command().unwrap()[..2],
            ["/bin/sh".to_string(), "-c".to_string()]
        );
        assert!(check(&["NONE"]).disabled());
        assert_eq!(check(&["NONE"]).command(), None);
        for bad in [
            &[][..],
            &["CMD"],
            &["CMD-SHELL"],
            &["pg_isready"],
            &["CMD", ""],
        ] {
            assert!(check(bad).validate("service 'db'").is_err(), "{bad:?}");
        }
        assert!(check(&["CMD-SHELL", "true"]).validate("x").is_ok());
    }

    #[test]
    fn unset_timings_are_the_engines() {
        let c = check(&["CMD", "true"]);
        assert_eq!((c.interval(), c.retries()), (DEFAULT_INTERVAL, 3));
        let engine = c.engine();
        assert_eq!((engine.interval, engine.retries), (None, None));
        let c = Healthcheck {
            interval: Some(Duration::from_millis(500)),
            ..c
        };
        assert_eq!(c.engine().interval, Some(500_000_000));
    }
}
