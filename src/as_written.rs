//! How messages show what came from a config's `${VAR}`: as written, with the variable, never
//! with its value from the environment. The config installs each command argument, path and URL
//! that holds a `${VAR}` when it is read (the expanded text and the text as written: [`install`]);
//! every message ragate prints on stderr or writes as an error passes through [`conceal`] (in
//! `error::with_causes` and the terminal's stderr writer), so that a judge's argv with a DSN in
//! it, or a qrels path under a folder from the environment, is shown as written.

use std::sync::RwLock;

/// (expanded, as written), longest expanded text first.
static PAIRS: RwLock<Vec<(String, String)>> = RwLock::new(Vec::new());

/// Adds `(expanded, as written)` pairs of a config.
pub(crate) fn install(pairs: Vec<(String, String)>) {
    let mut installed = PAIRS.write().unwrap_or_else(|e| e.into_inner());
    installed.extend(pairs);
    installed.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.cmp(b)));
    installed.dedup();
}

/// `message` with every installed expanded text replaced by the text as written.
pub(crate) fn conceal(message: &str) -> String {
    let pairs = PAIRS.read().unwrap_or_else(|e| e.into_inner());
    conceal_with(&pairs, message)
}

fn conceal_with(pairs: &[(String, String)], message: &str) -> String {
    let mut message = message.to_string();
    for (expanded, written) in pairs {
        message = message.replace(expanded.as_str(), written);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expanded_text_is_shown_as_written() {
        let pairs = [
            (
                "--dsn=https://f00d@o1.example/42".to_string(),
                "--dsn=${DSN}".to_string(),
            ),
            ("data/q.jsonl".to_string(), "${DIR}/q.jsonl".to_string()),
        ];
        assert_eq!(
            conceal_with(
                &pairs,
                "`python3 j.py --dsn=https://f00d@o1.example/42`: exit 2; cannot read /p/data/q.jsonl"
            ),
            "`python3 j.py --dsn=${DSN}`: exit 2; cannot read /p/${DIR}/q.jsonl"
        );
    }
}
