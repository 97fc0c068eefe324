//! The secrets ragate knows of, and their redaction from everything it writes and prints.
//!
//! Registered ([`register`]): the value of every variable an `api_key_env` names, the value of
//! every `${VAR}` of the config that lands in a URL (`base_url`, `url`, any value with `://`) or
//! in `api_key_env`, and the value of every environment variable whose name looks secret
//! ([`name_looks_secret`]: it contains KEY, TOKEN, SECRET, PASSWORD, PASS, AUTH or CREDENTIAL).
//! A value shorter than [`MIN_SECRET_LEN`] characters, or without a letter, is not registered:
//! redacting it would mangle ordinary words and numbers.
//!
//! [`redact`] replaces each registered value, and its JSON-, HTML/XML-, Markdown- and
//! URL-escaped forms as text from outside may hold them, with [`REDACTED`], in one pass of an
//! Aho-Corasick searcher. It runs on raw text only, before anything is escaped: in each sink's one
//! encoder (`json_text`, `report::inert`, the JUnit and HTML writers, annotations), in the
//! terminal writers of `term` (on the text ragate composed, before the terminal's guard), and at
//! the source on endpoint error bodies and a child's stderr. Nothing redacts escaped text.

use std::borrow::Cow;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use aho_corasick::{AhoCorasick, MatchKind};

/// What a secret becomes.
pub(crate) const REDACTED: &str = "[redacted]";
/// Values shorter than this (in characters) are not registered.
pub(crate) const MIN_SECRET_LEN: usize = 6;
/// What a variable's name contains (case-insensitively) when its value is treated as a secret.
const SECRET_NAME_PARTS: [&str; 7] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASS",
    "AUTH",
    "CREDENTIAL",
];

/// Every form of every registered secret, and the searcher over them all (one pass over a text,
/// the leftmost and then longest match first, so that an escaped form that holds another is
/// replaced whole).
static FORMS: RwLock<Forms> = RwLock::new(Forms {
    forms: Vec::new(),
    searcher: None,
});

/// The registered forms and their searcher.
struct Forms {
    forms: Vec<String>,
    searcher: Option<AhoCorasick>,
}
/// Whether anything is registered: [`redact`] costs nothing until then.
static ANY: AtomicBool = AtomicBool::new(false);

/// Whether a variable called `name` holds a secret by its name (`OPENAI_API_KEY`, `HF_TOKEN`).
pub(crate) fn name_looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
}

/// Whether `value` is long and distinctive enough to be redacted (see the module docs).
fn worth_registering(value: &str) -> bool {
    value.chars().count() >= MIN_SECRET_LEN && value.chars().any(char::is_alphabetic)
}

/// Registers `value` as a secret (a no-op for short or letterless values, see the module docs).
pub(crate) fn register(value: &str) {
    if !worth_registering(value) {
        return;
    }
    let mut registered = FORMS.write().unwrap_or_else(|e| e.into_inner());
    let mut added = false;
    for form in escaped_forms(value) {
        if !registered.forms.contains(&form) {
            registered.forms.push(form);
            added = true;
        }
    }
    if added {
        registered.forms.sort();
        registered.searcher = Some(
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&registered.forms)
                .expect("a few registered values build a searcher"),
        );
        ANY.store(true, Ordering::Release);
    }
}

/// Registers the value of the environment variable `name`, when it is set.
pub(crate) fn register_variable(name: &str) {
    if let Ok(value) = std::env::var(name) {
        register(&value);
    }
}

/// Registers every environment variable whose name looks secret ([`name_looks_secret`]).
pub(crate) fn register_environment() {
    for (name, value) in std::env::vars_os() {
        if let (Some(name), Some(value)) = (name.to_str(), value.to_str())
            && name_looks_secret(name)
        {
            register(value);
        }
    }
}

/// Whether any secret is registered (while none is, [`redact`] changes nothing).
pub(crate) fn any() -> bool {
    ANY.load(Ordering::Acquire)
}

/// `text` with every registered secret (in any of its escaped forms) replaced by [`REDACTED`];
/// borrowed, without a scan, while nothing is registered.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    if !ANY.load(Ordering::Acquire) {
        return Cow::Borrowed(text);
    }
    let registered = FORMS.read().unwrap_or_else(|e| e.into_inner());
    let Some(searcher) = &registered.searcher else {
        return Cow::Borrowed(text);
    };
    if !searcher.is_match(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    searcher.replace_all_with(text, &mut out, |_, _, out| {
        out.push_str(REDACTED);
        true
    });
    Cow::Owned(out)
}

/// `value` as it may appear in what ragate writes: as it is, JSON-escaped, HTML/XML-escaped
/// (with the entity spellings of maud and of XML writers), Markdown-escaped and percent-encoded.
fn escaped_forms(value: &str) -> Vec<String> {
    let json = serde_json::to_string(value).expect("a string serialises");
    let json = json[1..json.len() - 1].to_string();
    let html = |quot: &str, apos: &str| {
        value
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', quot)
            .replace('\'', apos)
    };
    let markdown: String = value
        .chars()
        .flat_map(|c| {
            let escape = c.is_ascii_punctuation().then_some('\\');
            escape.into_iter().chain(std::iter::once(c))
        })
        .collect();
    let percent: String = value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let mut forms = vec![
        value.to_string(),
        json,
        html("&quot;", "&#39;"),
        html("&quot;", "&apos;"),
        html("&#34;", "&#x27;"),
        markdown,
        percent,
    ];
    forms.sort();
    forms.dedup();
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_look_secret() {
        for name in [
            "OPENAI_API_KEY",
            "hf_token",
            "DB_PASSWORD",
            "GH_AUTH",
            "AWS_SECRET",
        ] {
            assert!(name_looks_secret(name), "{name}");
        }
        for name in ["HOME", "MAXDROP", "LLM_URL", "CI"] {
            assert!(!name_looks_secret(name), "{name}");
        }
    }

    #[test]
    fn registered_values_and_their_escaped_forms_are_redacted() {
        // Values unique to this test: the registry is process-wide.
        register("sk-unit-\"quoted\"<&>'-9f3a");
        let text = "a sk-unit-\"quoted\"<&>'-9f3a b \
                    sk-unit-\\\"quoted\\\"<&>'-9f3a c \
                    sk-unit-&quot;quoted&quot;&lt;&amp;&gt;&#39;-9f3a d \
                    sk\\-unit\\-\\\"quoted\\\"\\<\\&\\>\\'\\-9f3a e \
                    sk-unit-%22quoted%22%3C%26%3E%27-9f3a f";
        assert_eq!(
            redact(text),
            "a [redacted] b [redacted] c [redacted] d [redacted] e [redacted] f"
        );
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn short_and_letterless_values_are_not_registered() {
        register("ab1");
        register("1234567890");
        assert_eq!(
            redact("ab1 1234567890 0.1234567890"),
            "ab1 1234567890 0.1234567890"
        );
    }
}
