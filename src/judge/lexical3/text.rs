//! The text rules of `lexical-3` before `lexical-2`'s analysis: mending joined sentences,
//! dropping a leading `Yes,` / `No,` and meta clauses, and telling meta sentences (the rules are
//! in the documentation of [`crate::judge::lexical3`]).

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;

use crate::judge::lexical2::text::NEGATIONS;
use crate::judge::stop_words::STOP_WORDS;

/// Words (lowercase, sorted) that speak of the answer, the question or the sources rather than
/// of the subject: a clause or sentence whose content words are all among them is meta.
#[rustfmt::skip]
pub const META_WORDS: &[&str] = &[
    "according", "answer", "based", "below", "brief", "briefly", "certainly", "conclude",
    "conclusion", "context", "contexts", "course", "details", "document", "documentation", "documents",
    "excerpt", "excerpts", "find", "following", "found", "given", "glad", "happy", "help",
    "helps", "hope", "information", "know", "let", "mention", "mentioned", "mentions", "note",
    "overall", "passage", "passages", "provided", "question", "questions", "said", "say", "says",
    "short", "source", "sources", "state", "stated", "states", "summarise", "summarised",
    "summarize", "summarized", "summary", "sure", "text", "texts",
];

/// How many words a leading meta clause may have.
const MAX_CLAUSE_WORDS: usize = 12;

/// `text` with a space after every `.` `!` `?` that joins a lowercase letter, a digit, `)` or
/// a closing quote to an uppercase letter (`2001.Anna` -> `2001. Anna`).
pub fn mend_joins(text: &str) -> Cow<'_, str> {
    let joined = |before: char, mark: char, after: char| {
        matches!(mark, '.' | '!' | '?')
            && after.is_uppercase()
            && (before.is_lowercase()
                || before.is_ascii_digit()
                || matches!(before, ')' | '"' | '”' | '\'' | '’'))
    };
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| (1..chars.len().saturating_sub(1)).contains(&i);
    let needs = (0..chars.len()).any(|i| at(i) && joined(chars[i - 1], chars[i], chars[i + 1]));
    if !needs {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        out.push(c);
        if at(i) && joined(chars[i - 1], c, chars[i + 1]) {
            out.push(' ');
        }
    }
    Cow::Owned(out)
}

/// A claim's opening read: what is left to judge and what was dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening<'a> {
    /// The claim without its leading `Yes,` / `No,` and meta clauses.
    pub rest: &'a str,
    /// The claim was a bare `yes` or `no` (with meta clauses at most).
    pub bare_yes_no: bool,
    /// The claim was meta clauses only, or a meta sentence ([`is_meta`]).
    pub meta: bool,
}

/// Drops a leading `Yes,` / `No,` and leading meta clauses (any order, repeated).
pub fn strip_opening(claim: &str) -> Opening<'_> {
    let mut rest = claim.trim();
    let (mut yes_no, mut meta) = (false, false);
    loop {
        if let Some(after) = strip_yes_no(rest) {
            (yes_no, rest) = (true, after);
        } else if let Some(after) = strip_meta_clause(rest) {
            (meta, rest) = (true, after);
        } else {
            break;
        }
    }
    let no_text = !rest.chars().any(char::is_alphanumeric);
    let meta_rest = is_meta(rest);
    Opening {
        rest,
        bare_yes_no: (no_text || meta_rest) && yes_no,
        meta: !yes_no && ((no_text && meta) || meta_rest),
    }
}

/// `rest` after a leading `yes` / `no` followed by punctuation or the end.
fn strip_yes_no(text: &str) -> Option<&str> {
    let word_end = text
        .find(|c: char| !c.is_alphabetic())
        .unwrap_or(text.len());
    if !matches!(text[..word_end].to_lowercase().as_str(), "yes" | "no") {
        return None;
    }
    let after = text[word_end..].trim_start();
    if after.is_empty() {
        return Some(after);
    }
    after
        .strip_prefix([',', '.', '!', ';', ':'])
        .map(str::trim_start)
}

/// Whether `text` has content words (lowercase words, `'s` removed as in `here's`, that are
/// neither stop words nor negations) and all of them are meta words; stops at the first
/// content word that is not.
pub fn is_meta(text: &str) -> bool {
    let mut any = false;
    for word in text.unicode_words() {
        let word = word.to_lowercase().replace('’', "'");
        let word = word.strip_suffix("'s").unwrap_or(&word);
        if STOP_WORDS.binary_search(&word).is_ok() || NEGATIONS.binary_search(&word).is_ok() {
            continue;
        }
        if META_WORDS.binary_search(&word).is_err() {
            return false;
        }
        any = true;
    }
    any
}

/// `text` after a leading meta clause: up to the first `,` or `:`, or up to the word `that`,
/// within [`MAX_CLAUSE_WORDS`] words.
fn strip_meta_clause(text: &str) -> Option<&str> {
    let mut cuts: Vec<(usize, usize)> = Vec::new(); // (clause end, rest start)
    if let Some(p) = text.find([',', ':']) {
        cuts.push((p, p + 1));
    }
    if let Some((start, word)) = text
        .unicode_word_indices()
        .take(MAX_CLAUSE_WORDS)
        .find(|(_, w)| w.eq_ignore_ascii_case("that"))
    {
        cuts.push((start, start + word.len()));
    }
    cuts.sort_unstable();
    cuts.into_iter().find_map(|(end, rest)| {
        let clause = &text[..end];
        (clause.unicode_words().count() <= MAX_CLAUSE_WORDS && is_meta(clause))
            .then(|| text[rest..].trim_start())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_words_are_sorted_for_binary_search() {
        assert!(META_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn joins_are_mended_and_dotted_tokens_kept() {
        for (text, mended) in [
            (
                "released in 2001.Anna Berg wrote",
                "released in 2001. Anna Berg wrote",
            ),
            ("it was aborted.The part", "it was aborted. The part"),
            ("(see above).Then it", "(see above). Then it"),
            ("he said \"stop\".Then left", "he said \"stop\". Then left"),
            ("it works!Then?Yes", "it works! Then? Yes"),
        ] {
            assert_eq!(mend_joins(text), mended, "{text:?}");
        }
        for kept in [
            "It costs 3.5 euros.",
            "The U.S. Army and the U.S.Navy",
            "Version v2.1 runs.",
            "Mail example.com now.",
            "Ends with a dot.",
            ".Start",
            "a.",
        ] {
            assert!(matches!(mend_joins(kept), Cow::Borrowed(_)), "{kept:?}");
        }
    }

    fn opening(claim: &str) -> (&str, bool, bool) {
        let o = strip_opening(claim);
        (o.rest, o.bare_yes_no, o.meta)
    }

    #[test]
    fn yes_and_no_are_alike() {
        for bare in ["Yes.", "no", "No!", " YES "] {
            assert_eq!(opening(bare), ("", true, false), "{bare:?}");
        }
        assert_eq!(
            opening("Yes, based on the context."),
            ("based on the context.", true, false)
        );
        assert_eq!(
            opening("Yes, the bucket is deleted."),
            ("the bucket is deleted.", false, false)
        );
        assert_eq!(
            opening("No. The bucket is kept."),
            ("The bucket is kept.", false, false)
        );
        // A `no` that negates what follows stays.
        for kept in [
            "No objects are kept.",
            "Nothing is kept.",
            "Yesterday it ran.",
        ] {
            assert_eq!(opening(kept), (kept, false, false), "{kept:?}");
        }
    }

    #[test]
    fn meta_clauses_are_dropped_and_meta_sentences_told() {
        for (claim, rest) in [
            (
                "Based on the provided context, buckets hold objects.",
                "buckets hold objects.",
            ),
            ("In summary, buckets hold objects.", "buckets hold objects."),
            ("According to the documentation: it is kept.", "it is kept."),
            ("The document says that parts expire.", "parts expire."),
            ("Overall, based on the passages, it works.", "it works."),
            ("Note that parts expire.", "parts expire."),
        ] {
            assert_eq!(opening(claim), (rest, false, false), "{claim:?}");
        }
        for meta in [
            "Here is what the document says:",
            "Here’s what I found in the documents:",
            "Here are the details from the context:",
            "I hope this helps!",
            "Sure!",
        ] {
            assert!(is_meta(meta), "{meta:?}");
        }
        assert_eq!(
            opening("Here is what the document says:"),
            ("", false, true)
        );
        assert!(opening("I hope this helps!").2);
        assert_eq!(opening("In summary:"), ("", false, true));
        for not_meta in [
            "It is what it is.",
            "The document is stored in one region.",
            "Buckets hold objects, based on the key.",
            "In one region, buckets hold objects.",
        ] {
            assert!(!is_meta(not_meta), "{not_meta:?}");
            assert_eq!(opening(not_meta).0, not_meta, "{not_meta:?}");
        }
    }
}
