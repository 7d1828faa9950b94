//! Property tests of the JSONC reader: JSON as serde_json writes any value, with comments
//! and trailing commas put in at random places where JSONC allows them, strips to text of
//! the same length and lines that parses to that value; plain JSON is left as it is.

use proptest::prelude::*;
use serde_json::Value;

use super::*;

/// Characters that open or close comments, strings and containers, and a few others.
fn text() -> impl Strategy<Value = String> {
    "([/*,\"\\\\\\]}{\\[: \n\ta]|é|//|/\\*|\\*/){0,6}"
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(text(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// What goes between two tokens, by the next choice: nothing, blanks, or comments that
/// hold the characters of strings, other comments and commas.
const GAPS: &[&str] = &[
    "",
    "",
    " ",
    "\n",
    "// line, \"quoted\" /* not a block\n",
    "/* block, // not a line */",
    "/* \"x\" \n ** / */",
    "//\n",
    "/**/",
];

struct Writer<'c> {
    choices: &'c [u8],
    next: usize,
    out: String,
}

impl Writer<'_> {
    fn choose(&mut self, n: usize) -> usize {
        let choice = self.choices.get(self.next).copied().unwrap_or(0);
        self.next += 1;
        choice as usize % n
    }

    fn gap(&mut self) {
        let gap = GAPS[self.choose(GAPS.len())];
        self.out.push_str(gap);
    }

    /// The closing bracket of a non-empty container, maybe after a trailing comma.
    fn close(&mut self, bracket: char, items: usize) {
        if items > 0 && self.choose(3) == 0 {
            self.out.push(',');
            self.gap();
        }
        self.out.push(bracket);
    }

    fn value(&mut self, value: &Value) {
        self.gap();
        match value {
            Value::Array(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.value(item);
                    self.gap();
                }
                self.gap();
                self.close(']', items.len());
            }
            Value::Object(map) => {
                self.out.push('{');
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.gap();
                    self.out.push_str(&serde_json::to_string(key).unwrap());
                    self.gap();
                    self.out.push(':');
                    self.value(item);
                    self.gap();
                }
                self.gap();
                self.close('}', map.len());
            }
            scalar => self.out.push_str(&serde_json::to_string(scalar).unwrap()),
        }
        self.gap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(512) })]

    #[test]
    fn commented_json_strips_to_the_same_value(
        value in json_value(),
        choices in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let plain = serde_json::to_string(&value).unwrap();
        prop_assert_eq!(&strip(&plain), &plain);
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        prop_assert_eq!(&strip(&pretty), &pretty);

        let mut writer = Writer { choices: &choices, next: 0, out: String::new() };
        writer.value(&value);
        let jsonc = writer.out;
        let stripped = strip(&jsonc);
        prop_assert_eq!(stripped.len(), jsonc.len());
        prop_assert_eq!(stripped.lines().count(), jsonc.lines().count());
        let parsed: Value = serde_json::from_str(&stripped)
            .map_err(|e| TestCaseError::fail(format!("{e} in {stripped:?} of {jsonc:?}")))?;
        prop_assert_eq!(parsed, value);
    }
}
