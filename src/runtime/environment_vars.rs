//! Environment variables a caller passes: names the kernel and the engine take as given.

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// Rejects an empty name, a name with `=` or NUL, and a value with NUL: the engine would
/// otherwise set another variable (`A=B` sets `A`) or fail the exec with 126.
pub fn check_environment(vars: &BTreeMap<String, String>, what: &str) -> Result<()> {
    for (name, value) in vars {
        if name.is_empty() || name.contains(['=', '\0']) {
            return Err(Error::invalid_argument(format!(
                "{what}: environment variable name '{}' is invalid (empty, or contains '=' or NUL)",
                name.escape_debug()
            )));
        }
        if value.contains('\0') {
            return Err(Error::invalid_argument(format!(
                "{what}: the value of environment variable '{name}' contains NUL"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_equals_or_nul_and_values_with_nul_are_invalid() {
        let one = |k: &str, v: &str| BTreeMap::from([(k.to_string(), v.to_string())]);
        assert!(check_environment(&one("A", "x=y"), "t").is_ok());
        for (k, v) in [("", "1"), ("A=B", "1"), ("A\0", "1"), ("A", "a\0b")] {
            assert!(check_environment(&one(k, v), "t").is_err(), "{k:?}={v:?}");
        }
    }
}
