//! Sizes as docker reads them (`--memory`, `--tmpfs size=`, `hostRequirements`): a number
//! of bytes with an optional binary unit.

/// `512m`, `1.5g`, `1024` (bytes), as docker reads `--memory`.
pub fn parse_bytes(text: &str, flag: &str) -> std::result::Result<i64, String> {
    let bad = || format!("runArgs '{flag}' needs a size like 512m");
    let lower = text.trim().to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(split);
    let n: f64 = number.parse().map_err(|_| bad())?;
    let factor = match unit.trim_end_matches('b') {
        "" => 1u64,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = n * factor as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > i64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as i64)
}
