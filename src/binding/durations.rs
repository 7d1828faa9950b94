//! Milliseconds from JavaScript as durations: finite and not negative (`duration_ms`), or
//! above zero for the bounds where zero would mean "never" (`positive_duration_ms`);
//! fractions round up.

use std::time::Duration;

use crate::error::{Error, Result};

pub fn duration_ms(ms: Option<f64>, what: &str) -> Result<Option<Duration>> {
    match ms {
        None => Ok(None),
        Some(ms) if ms.is_finite() && ms >= 0.0 => {
            Ok(Some(Duration::from_millis(ms.ceil() as u64)))
        }
        Some(ms) => Err(Error::invalid_argument(format!(
            "{what} {ms} must be a non-negative number of milliseconds"
        ))),
    }
}

/// As `duration_ms`, for a bound that must be above zero.
pub fn positive_duration_ms(ms: Option<f64>, what: &str) -> Result<Option<Duration>> {
    match ms {
        Some(ms) if !ms.is_finite() || ms <= 0.0 => Err(Error::invalid_argument(format!(
            "{what} {ms} must be a positive number of milliseconds"
        ))),
        other => duration_ms(other, what),
    }
}
