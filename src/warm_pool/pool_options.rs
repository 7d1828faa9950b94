//! How big a warm pool is, and when the host can spare a new member.

use crate::error::{Error, Result};

/// The most members a pool may keep ready.
pub const MAX_SIZE: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolOptions {
    /// Members kept ready for the settings of the latest session (1..=16).
    pub size: u32,
    /// A member is made only while the 1-minute load average per CPU is at most this.
    pub max_load_per_cpu: f64,
    /// A member is made only while the host has at least this many bytes of memory
    /// available (and the member's own memory limit, when it has one, on top).
    pub min_available_memory: u64,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            size: 1,
            max_load_per_cpu: 1.5,
            min_available_memory: 512 << 20,
        }
    }
}

impl PoolOptions {
    pub fn validate(&self) -> Result<()> {
        if self.size == 0 || self.size > MAX_SIZE {
            return Err(Error::invalid_argument(format!(
                "pool.size {} is not between 1 and {MAX_SIZE}",
                self.size
            )));
        }
        if self.max_load_per_cpu.is_nan() || self.max_load_per_cpu <= 0.0 {
            return Err(Error::invalid_argument(
                "pool.maxLoadPerCpu must be a positive number",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_loads_out_of_range_are_refused() {
        assert!(PoolOptions::default().validate().is_ok());
        for bad in [
            PoolOptions {
                size: 0,
                ..Default::default()
            },
            PoolOptions {
                size: MAX_SIZE + 1,
                ..Default::default()
            },
            PoolOptions {
                max_load_per_cpu: 0.0,
                ..Default::default()
            },
            PoolOptions {
                max_load_per_cpu: f64::NAN,
                ..Default::default()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
