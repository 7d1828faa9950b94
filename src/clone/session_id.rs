//! Session ids become directory and branch names: `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`.

use crate::error::{Error, Result};

pub fn validate_session_id(id: &str) -> Result<()> {
    let mut chars = id.chars();
    let first = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if first && rest && id.len() <= 64 {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "session id '{id}' is invalid: 1 to 64 letters, digits, '_' or '-', starting with a letter or digit"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_ids_and_rejects_the_rest() {
        for ok in ["a", "A1", "sess_1-x", &"a".repeat(64)] {
            assert!(validate_session_id(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "../x",
            "a b",
            "$(id)",
            "-a",
            "_a",
            "a/b",
            "a.b",
            &"a".repeat(65),
        ] {
            assert!(validate_session_id(bad).is_err(), "{bad}");
        }
    }
}
