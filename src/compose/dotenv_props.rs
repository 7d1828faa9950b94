//! Property test of `.env` parsing: lines written from generated pairs, each value
//! unquoted, in single quotes or in double quotes with escapes, among blank and comment
//! lines, parse to exactly those pairs, in order, interpolated but for single quotes.

use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone, Copy)]
enum Quoting {
    Bare,
    Single,
    Double,
}

fn entry() -> impl Strategy<Value = (String, String, Quoting)> {
    let key = "[A-Za-z_][A-Za-z0-9_.-]{0,6}";
    prop_oneof![
        (
            key,
            "([a-z0-9=$:/.-]|é)([a-z0-9 =$:/.#\"'-]{0,10}[a-z0-9=$:/.-])?"
        )
            .prop_filter("no comment", |(_, v)| !v.contains(" #"))
            .prop_map(|(k, v)| (k, v, Quoting::Bare)),
        (key, "[a-z0-9 =$:/#\"\t\\\\-]{0,12}").prop_map(|(k, v)| (k, v, Quoting::Single)),
        (key, "[a-z0-9 =$:/#'\"\t\n\r\\\\-]{0,12}").prop_map(|(k, v)| (k, v, Quoting::Double)),
    ]
}

fn line(key: &str, value: &str, quoting: Quoting, layout: u8) -> String {
    let value = match quoting {
        Quoting::Bare => value.to_string(),
        Quoting::Single => format!("'{value}'"),
        Quoting::Double => {
            let mut out = String::from("\"");
            for c in value.chars() {
                match (c, layout % 2) {
                    ('\n', 0) => out.push_str("\\n"),
                    ('\t', _) => out.push_str("\\t"),
                    ('\r', _) => out.push_str("\\r"),
                    ('"' | '\\', _) => {
                        out.push('\\');
                        out.push(c);
                    }
                    (c, _) => out.push(c),
                }
            }
            out.push('"');
            out
        }
    };
    let export = if layout & 2 != 0 { "export " } else { "" };
    let (before, after) = if layout & 4 != 0 {
        (" ", " ")
    } else {
        ("", "")
    };
    let comment = if layout & 8 != 0 && !matches!(quoting, Quoting::Bare) {
        " # a comment"
    } else {
        ""
    };
    format!("{export}{key}{before}={after}{value}{comment}\n")
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(1024) })]

    #[test]
    fn written_pairs_parse_back(
        entries in proptest::collection::vec((entry(), any::<u8>()), 0..8),
    ) {
        let mut text = String::new();
        for ((key, value, quoting), layout) in &entries {
            if layout & 16 != 0 {
                text.push_str("\n# a comment = 'x'\n   \n");
            }
            text.push_str(&line(key, value, *quoting, *layout));
        }
        let want: Vec<DotenvEntry> = entries
            .iter()
            .map(|((key, value, quoting), _)| DotenvEntry {
                key: key.clone(),
                value: Some(value.clone()),
                interpolate: !matches!(quoting, Quoting::Single),
            })
            .collect();
        prop_assert_eq!(parse_dotenv(&text), Ok(want), "{}", text);
    }
}
