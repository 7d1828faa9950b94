//! JSONC → JSON: comments and trailing commas become spaces, so that every other byte keeps
//! its line and column and a parse error points into the original file.

pub fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' && *b != b'\r' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    // The last comma that followed a value, cleared by any other token. A comma after `[`,
    // `{`, `:` or another comma is an error, left in place for the parser to report.
    let mut pending_comma: Option<usize> = None;
    // The last byte outside whitespace and comments (`"` for a whole string).
    let mut previous_token = b' ';
    while i < bytes.len() {
        let byte = bytes[i];
        match byte {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |p| i + 2 + p + 2);
                blank(&mut out, i, end);
                i = end;
                continue;
            }
            b',' => {
                let follows_value = !matches!(previous_token, b'[' | b'{' | b':' | b',');
                pending_comma = follows_value.then_some(i);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(at) = pending_comma.take() {
                    out[at] = b' ';
                }
                i += 1;
            }
            b if b.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
        previous_token = byte;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_comments_and_trailing_commas_keeping_positions() {
        let src = "{\n  // a comment\n  \"a\": \"x // not a comment\", /* block */\n  \"b\": [1, 2,],\n}\n";
        let json = strip(src);
        assert_eq!(json.len(), src.len());
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["a"], "x // not a comment");
        assert_eq!(v["b"], serde_json::json!([1, 2]));
        assert_eq!(json.lines().count(), src.lines().count());
    }

    #[test]
    fn only_a_comma_after_a_value_is_trailing() {
        for invalid in ["[,]", "{,}", "[1,,]", "{\"a\":,}"] {
            assert!(
                serde_json::from_str::<serde_json::Value>(&strip(invalid)).is_err(),
                "{invalid}"
            );
        }
        let v: serde_json::Value =
            serde_json::from_str(&strip("{\"a\": [\"x\", /* c */ ], // c\n }")).unwrap();
        assert_eq!(v, serde_json::json!({"a": ["x"]}));
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        let v: serde_json::Value = serde_json::from_str(&strip(r#"{"a": "q\"// x", }"#)).unwrap();
        assert_eq!(v["a"], "q\"// x");
    }
}

#[cfg(test)]
#[path = "jsonc_props.rs"]
mod props;
