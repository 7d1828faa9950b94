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
    // Position of the last comma seen outside strings, cleared by any other token.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
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
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |p| i + 2 + p + 2);
                blank(&mut out, i, end);
                i = end;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(at) = pending_comma.take() {
                    out[at] = b' ';
                }
                i += 1;
            }
            b if b.is_ascii_whitespace() => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
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
    fn escaped_quotes_do_not_end_strings() {
        let v: serde_json::Value = serde_json::from_str(&strip(r#"{"a": "q\"// x", }"#)).unwrap();
        assert_eq!(v["a"], "q\"// x");
    }
}
