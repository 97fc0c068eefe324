//! The secrets ragate knows of, and their redaction from everything it writes and prints.
//!
//! Registered ([`register`]): the value of every variable an `api_key_env` names, the value of
//! every `${VAR}` of the config that lands in a URL (`base_url`, `url`, any value with `://`) or
//! in `api_key_env`, the `user:password` of a URL's userinfo (what a client sends as HTTP Basic
//! auth), and the value of every environment variable whose name looks secret
//! ([`name_looks_secret`]: it contains KEY, TOKEN, SECRET, PASSWORD, PASS, AUTH or CREDENTIAL).
//! A value shorter than [`MIN_SECRET_LEN`] characters, or without a letter, is not registered:
//! redacting it would mangle ordinary words and numbers.
//!
//! [`redact`] replaces, with [`REDACTED`], every run of [`forms::PIECE_LEN`] or more
//! consecutive characters of a registered value in any of its forms (the value, its base64 and
//! base64url encodings at every alignment: [`forms`]), and a shorter value whole, wherever the text
//! holds it as it is or under any mix of JSON, Markdown, percent and HTML/XML escapes ([`views`]).
//! It runs on raw text only, before anything is escaped: in each sink's one encoder
//! (`json_text`, `report::inert`, the JUnit and HTML writers, annotations), in the terminal
//! writers of `term` (on the text ragate composed, before the terminal's guard), and at the source
//! on endpoint error bodies and a child's stderr. Nothing redacts escaped text.

mod forms;
mod views;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use aho_corasick::AhoCorasick;

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

/// Every registered value, and the searcher over the pieces of all their forms (built when
/// first needed after a registration, so that registering many values builds it once).
static REGISTRY: RwLock<Registry> = RwLock::new(Registry {
    values: Vec::new(),
    searcher: None,
});

struct Registry {
    values: Vec<String>,
    /// None while out of date.
    searcher: Option<AhoCorasick>,
}

impl Registry {
    fn build_searcher(&self) -> AhoCorasick {
        let mut patterns: Vec<String> = Vec::new();
        for value in &self.values {
            for form in forms::whole_forms(value) {
                patterns.extend(forms::pieces(&form).into_iter().map(str::to_string));
            }
        }
        patterns.sort_unstable();
        patterns.dedup();
        AhoCorasick::new(&patterns).expect("the pieces of the registered values build a searcher")
    }
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
    let mut registry = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    if !registry.values.iter().any(|known| known == value) {
        registry.values.push(value.to_string());
        registry.searcher = None;
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

/// Registers what a client makes of the userinfo of `url` (`http://user:pass@host/`): the
/// `user:pass` it encodes for HTTP Basic auth, as written and percent-decoded, and the password.
pub(crate) fn register_userinfo(url: &str) {
    let Some((_, rest)) = url.split_once("://") else {
        return;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return;
    };
    register(userinfo);
    let decoded = views::percent_decoded(userinfo);
    register(&decoded);
    if let Some((_, password)) = decoded.split_once(':') {
        register(password);
    }
}

/// Whether any secret is registered (while none is, [`redact`] changes nothing).
pub(crate) fn any() -> bool {
    ANY.load(Ordering::Acquire)
}

/// `text` with every registered secret (any form, any piece of [`forms::PIECE_LEN`] characters, under
/// any escapes: see the module docs) replaced by [`REDACTED`]; borrowed, without a scan, while
/// nothing is registered or nothing is found.
pub(crate) fn redact(text: &str) -> Cow<'_, str> {
    if !ANY.load(Ordering::Acquire) {
        return Cow::Borrowed(text);
    }
    let spans = with_searcher(|searcher| secret_spans(searcher, text));
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut written = 0;
    for span in spans {
        out.push_str(&text[written..span.start]);
        out.push_str(REDACTED);
        written = span.end;
    }
    out.push_str(&text[written..]);
    Cow::Owned(out)
}

/// Runs `search` with the searcher, building it first when a registration made it out of date.
fn with_searcher<T>(search: impl FnOnce(&AhoCorasick) -> T) -> T {
    {
        let registry = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
        if let Some(searcher) = &registry.searcher {
            return search(searcher);
        }
    }
    let mut registry = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    if registry.searcher.is_none() {
        registry.searcher = Some(registry.build_searcher());
    }
    search(registry.searcher.as_ref().expect("just built"))
}

/// The spans of `text` that hold a secret, in order, merged where they overlap or touch, each
/// on character boundaries.
fn secret_spans(searcher: &AhoCorasick, text: &str) -> Vec<Range<usize>> {
    let mut spans: Vec<Range<usize>> = searcher
        .find_overlapping_iter(text)
        .map(|found| found.range())
        .collect();
    for view in views::decoded_views(text) {
        spans.extend(
            searcher
                .find_overlapping_iter(&view.bytes)
                .map(|found| view.source(found.range())),
        );
    }
    for span in &mut spans {
        while !text.is_char_boundary(span.start) {
            span.start -= 1;
        }
        while !text.is_char_boundary(span.end) {
            span.end += 1;
        }
    }
    spans.sort_unstable_by_key(|span| span.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
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

    #[test]
    fn encoded_forms_and_pieces_of_a_key_are_redacted() {
        use base64::Engine as _;
        use base64::engine::general_purpose::{STANDARD, URL_SAFE};
        let key = "sk-piece-7d41c09e2ab35f68e0917c4d";
        register(key);
        let leaks = |text: &str| {
            let shown = redact(text);
            // No 12 characters of the key, of its base64 or of its base64url survive.
            let mut forms = vec![key.to_string()];
            forms.extend(forms::whole_forms(key));
            forms
                .iter()
                .flat_map(|form| forms::pieces(form))
                .any(|piece| shown.contains(piece))
        };
        for before in ["", "u", "us", "use", "user:"] {
            for engine in [&STANDARD, &URL_SAFE] {
                let encoded = engine.encode(format!("{before}{key}!"));
                let text = format!("Authorization: Basic {encoded} was refused");
                assert!(!leaks(&text), "{text} -> {}", redact(&text));
            }
        }
        for text in [
            r#"{"error": "bad key sk\u002dpiece\u002d7d41c09e2ab35f68e0917c4d"}"#,
            r#"{"key": "sk-piece-7d41c09e2ab35f68e0917c4d\/"}"#,
            "name 7d41c09e2ab35f68e091 not in the context",
            "sk-piece-7d41c%30%39e2ab35f68e0917c4d",
        ] {
            assert!(!leaks(text), "{text} -> {}", redact(text));
            assert!(redact(text).contains(REDACTED));
        }
        // Eleven characters of it are no secret; the words around a piece stay.
        assert_eq!(redact("7d41c09e2ab"), "7d41c09e2ab");
        assert_eq!(
            redact("name 7d41c09e2ab35f68e091 not in the context"),
            "name [redacted] not in the context"
        );
    }

    #[test]
    fn userinfo_is_registered_as_basic_auth_sends_it() {
        use base64::Engine as _;
        register_userinfo("http://alice:pw%2Dsecret-81c3@llm.example/v1");
        let header = base64::engine::general_purpose::STANDARD.encode("alice:pw-secret-81c3");
        assert_eq!(redact(&format!("Basic {header}")), "Basic [redacted]");
        assert_eq!(redact("pw-secret-81c3"), REDACTED);
    }
}
