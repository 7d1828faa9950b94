//! A `.gitattributes` blob as git's fsck checks it: git refuses to read one over 100 MiB or
//! with a line of 2048 bytes or more (up to its first NUL), so fsck refuses them too.

use super::finding::Finding;

const MAX_BYTES: usize = 100 << 20;
const MAX_LINE: usize = 2048;

pub fn check(data: &[u8]) -> Result<(), Finding> {
    if data.len() > MAX_BYTES {
        return Err(Finding::new(
            "gitattributesLarge",
            ".gitattributes too large to parse",
        ));
    }
    let text = data.split(|&b| b == 0).next().unwrap_or_default();
    if text
        .split(|&b| b == b'\n')
        .any(|line| line.len() >= MAX_LINE)
    {
        return Err(Finding::new(
            "gitattributesLineLength",
            ".gitattributes has too long lines to parse",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_refused() {
        assert!(check(b"*.png binary\n").is_ok());
        assert!(check(format!("{}\n", "x".repeat(2047)).as_bytes()).is_ok());
        assert!(check("x".repeat(2048).as_bytes()).is_err());
        assert!(
            check(format!("a\0{}", "x".repeat(4000)).as_bytes()).is_ok(),
            "git stops at NUL"
        );
    }
}
