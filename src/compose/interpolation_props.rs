//! Property tests of compose interpolation: `$$` is one `$` (so escaping every `$` of any
//! text gives that text back), text without `$` is unchanged, and a set variable's value
//! is put in exactly as it is, whatever it holds, in every form that reads it.

use std::cell::RefCell;
use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

#[derive(Default)]
struct Map {
    vars: BTreeMap<String, String>,
    unset: RefCell<Vec<String>>,
}

impl Variables for Map {
    fn get(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
    fn unset(&self, name: &str) {
        self.unset.borrow_mut().push(name.to_string());
    }
}

fn any_text() -> impl Strategy<Value = String> {
    "([${}:?+_a-zA-Z0-9 -]|é|\n){0,24}"
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(1024) })]

    #[test]
    fn escaped_dollars_give_the_text_back(text in any_text(), value in any_text()) {
        let vars = Map { vars: [("A".to_string(), value)].into(), ..Default::default() };
        let escaped = text.replace('$', "$$");
        prop_assert_eq!(substitute(&escaped, &vars), Ok(text));
        prop_assert!(vars.unset.borrow().is_empty());
    }

    #[test]
    fn text_without_a_dollar_is_unchanged(text in "[^$]{0,32}") {
        prop_assert_eq!(substitute(&text, &Map::default()), Ok(text));
    }

    #[test]
    fn a_set_value_is_put_in_exactly(
        name in "[A-Za-z_][A-Za-z0-9_]{0,6}",
        value in any_text().prop_filter("set", |v| !v.is_empty()),
        before in "[^$]{0,8}",
        after in "[^$]{0,8}",
        fallback in "[a-z]{0,4}",
    ) {
        let vars = Map { vars: [(name.clone(), value.clone())].into(), ..Default::default() };
        let want = format!("{before}{value}{after}");
        for form in ["", ":-", "-", ":?", "?"] {
            let text = match form {
                "" => format!("{before}${{{name}}}{after}"),
                _ => format!("{before}${{{name}{form}{fallback}}}{after}"),
            };
            prop_assert_eq!(substitute(&text, &vars), Ok(want.clone()), "{}", text);
        }
        for form in [":+", "+"] {
            let text = format!("{before}${{{name}{form}{fallback}}}{after}");
            prop_assert_eq!(
                substitute(&text, &vars),
                Ok(format!("{before}{fallback}{after}")),
                "{}", text
            );
        }
        if !after.starts_with(|c: char| c == '_' || c.is_ascii_alphanumeric()) {
            let bare = format!("{before}${name}{after}");
            prop_assert_eq!(substitute(&bare, &vars), Ok(want.clone()), "{}", bare);
        }
        prop_assert!(vars.unset.borrow().is_empty());
    }

    #[test]
    fn an_unset_name_takes_its_default_or_reads_empty(
        name in "[A-Z_]{1,6}",
        fallback in "[^${}]{0,8}",
    ) {
        let vars = Map::default();
        prop_assert_eq!(substitute(&format!("${{{name}:-{fallback}}}"), &vars), Ok(fallback.clone()));
        prop_assert_eq!(substitute(&format!("${{{name}-{fallback}}}"), &vars), Ok(fallback));
        prop_assert!(vars.unset.borrow().is_empty());
        prop_assert_eq!(substitute(&format!("${{{name}}}"), &vars), Ok(String::new()));
        prop_assert_eq!(vars.unset.borrow().clone(), vec![name]);
    }
}
