//! The checks of `lexical-3` against the claim's best-matching context window (the window of
//! `lexical-2`'s share): names, comparisons and quantifiers must be stated there, not anywhere in
//! the contexts (the rules are in the documentation of [`crate::judge::lexical3`]).

use unicode_segmentation::UnicodeSegmentation;

use crate::judge::lexical2::text::Analysed;
use crate::judge::lexical2::{Judged2, Prepared2};

/// Comparative, superlative and ordinal words (lowercase, sorted) with the direction of a
/// comparison they make: `1` the first thing compared has the larger number (`more`, `longer`),
/// `-1` the smaller (`less`, `cheaper`, `faster`: a smaller price or time), `0` no order of
/// numbers (`first`, `before`: an order of events, checked by the words alone).
#[rustfmt::skip]
pub const COMPARISONS: &[(&str, i8)] = &[
    ("before", 0), ("best", 0), ("better", 0), ("bigger", 1), ("biggest", 1), ("cheaper", -1),
    ("cheapest", -1), ("earlier", -1), ("earliest", -1), ("faster", -1), ("fastest", -1),
    ("fewer", -1), ("fewest", -1), ("first", 0), ("greater", 1), ("greatest", 1),
    ("higher", 1), ("highest", 1), ("larger", 1), ("largest", 1), ("later", 1),
    ("latest", 1), ("least", -1), ("less", -1), ("longer", 1), ("longest", 1), ("lower", -1),
    ("lowest", -1), ("more", 1), ("most", 1), ("older", 1), ("oldest", 1), ("shorter", -1),
    ("shortest", -1), ("slower", 1), ("slowest", 1), ("smaller", -1), ("smallest", -1),
    ("worse", 0), ("worst", 0), ("younger", -1), ("youngest", -1),
];

/// Quantifier words (lowercase, sorted) and their group: a quantifier of the claim needs a word
/// of its group in the window (`every` is supported by `all`).
#[rustfmt::skip]
pub const QUANTIFIERS: &[(&str, &str)] = &[
    ("all", "all"), ("always", "all"), ("both", "both"), ("each", "all"), ("every", "all"),
    ("exclusively", "only"), ("never", "never"), ("only", "only"), ("solely", "only"),
];

/// Which of the window checks are on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowChecks {
    /// A name of the claim must be in the best window (an entity swap names one from elsewhere).
    pub names: bool,
    /// A comparison of the claim must be stated in the best window, or the claim's numbers must
    /// be there and agree with it.
    pub comparisons: bool,
    /// A quantifier of the claim needs one of its group in the best window.
    pub quantifiers: bool,
}

/// The window's words, each sentence as ` w1 w2 ... ` (to find names and words).
fn window_words(prepared: &Prepared2, judged: &Judged2) -> String {
    let mut words = String::from(" ");
    for i in judged.window.clone() {
        for word in &prepared.sentence(i).words {
            words.push_str(word);
            words.push(' ');
        }
        words.push_str("| ");
    }
    words
}

fn has_word(words: &str, word: &str) -> bool {
    words.contains(&format!(" {word} "))
}

/// The reasons the claim fails the window checks (empty: it passes them).
/// `text` is the claim as judged (its analysis is `judged.claim`).
pub fn failures(
    prepared: &Prepared2,
    judged: &Judged2,
    text: &str,
    checks: WindowChecks,
) -> Vec<String> {
    let mut failures = Vec::new();
    if judged.window.is_empty() {
        return failures;
    }
    let words = window_words(prepared, judged);
    let claim = &judged.claim;
    if checks.names {
        for name in &claim.names {
            let phrase = name.words.join(" ");
            let message = format!(
                "unsupported: name {} is not in the best-matching context window (it is elsewhere in the context)",
                name.written
            );
            if !has_word(&words, &phrase) && !failures.contains(&message) {
                failures.push(message);
            }
        }
    }
    if checks.comparisons {
        failures.extend(comparison_failure(prepared, judged, text, &words));
    }
    if checks.quantifiers {
        failures.extend(quantifier_failure(claim, &words));
    }
    failures
}

/// Words of time that compare only in some uses (`before 2001`, `born first`, `later than`).
const OF_TIME: &[&str] = &["before", "earlier", "first", "later"];

/// The claim's first comparison word and its direction, if any: a listed word, or a word
/// ending in `er` before `than` (`deeper than`, direction 0). Not comparisons: a bound (`at
/// most`, `at least`), and a word of time ([`OF_TIME`]) unless it compares: `before` followed
/// by a name or a number, `first` ending its clause, `earlier` and `later` before `than`.
fn comparison<'a>(claim: &'a Analysed, text: &str) -> Option<(&'a str, i8)> {
    let words = &claim.words;
    let raw: Vec<(usize, &str)> = text.unicode_word_indices().collect();
    let clause_ends = |i: usize| match (raw.get(i), raw.get(i + 1)) {
        (Some((start, word)), Some((next, _))) => {
            text[start + word.len()..*next].contains([',', ';', ':', '.', '!', '?'])
        }
        _ => true,
    };
    words.iter().enumerate().find_map(|(i, word)| {
        let next = words.get(i + 1).map(String::as_str);
        let than = next == Some("than");
        if let Ok(at) = COMPARISONS.binary_search_by(|(w, _)| w.cmp(&word.as_str())) {
            let bound = i > 0 && words[i - 1] == "at" && matches!(word.as_str(), "most" | "least");
            let compares = match word.as_str() {
                "before" => raw.get(i + 1).is_some_and(|(_, w)| {
                    w.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit())
                }),
                "first" => clause_ends(i),
                "earlier" | "later" => than,
                _ => !bound,
            };
            return compares.then_some((word.as_str(), COMPARISONS[at].1));
        }
        (than && word.len() > 4 && word.ends_with("er") && !OF_TIME.contains(&word.as_str()))
            .then_some((word.as_str(), 0))
    })
}

/// Why the claim's comparison is not supported by the window, if it is not.
fn comparison_failure(
    prepared: &Prepared2,
    judged: &Judged2,
    text: &str,
    words: &str,
) -> Option<String> {
    let (cue, direction) = comparison(&judged.claim, text)?;
    if has_word(words, cue) {
        return None;
    }
    let numbers: Vec<f64> = judged
        .claim
        .quantities
        .iter()
        .filter(|q| !q.weak)
        .filter_map(|q| q.value.parse().ok())
        .collect();
    let in_window = |value: &str| {
        judged.window.clone().any(|i| {
            prepared
                .sentence(i)
                .quantities
                .iter()
                .any(|q| q.value == value)
        })
    };
    let stated = judged
        .claim
        .quantities
        .iter()
        .filter(|q| !q.weak)
        .all(|q| in_window(&q.value));
    if numbers.len() >= 2 && stated {
        let order = numbers[0].partial_cmp(&numbers[1]).map_or(0, |o| o as i8);
        if direction == 0 || order == direction {
            return None;
        }
        return Some(format!(
            "contradicted: the claim's numbers {} and {} do not agree with \"{cue}\"",
            numbers[0], numbers[1]
        ));
    }
    Some(format!(
        "unsupported: the comparison \"{cue}\" is not stated in the best-matching context window, nor both of its numbers"
    ))
}

/// Words after `only` that make it a condition (`only then`, `only when`), not a quantifier;
/// `only` before a number (`only six of the 17`) stresses a count, which the number check sees.
const CONDITIONS: &[&str] = &["after", "if", "once", "then", "when", "while"];

/// Why the claim's quantifier is not supported by the window, if it is not.
fn quantifier_failure(claim: &Analysed, words: &str) -> Option<String> {
    let group_of = |word: &str| {
        QUANTIFIERS
            .binary_search_by(|(w, _)| w.cmp(&word))
            .ok()
            .map(|at| QUANTIFIERS[at].1)
    };
    claim.words.iter().enumerate().find_map(|(i, word)| {
        let group = group_of(word)?;
        let next = claim.words.get(i + 1).map(String::as_str).unwrap_or("");
        let count = next.starts_with(|c: char| c.is_ascii_digit())
            || claim.quantities.iter().any(|q| q.written.eq_ignore_ascii_case(next));
        if group == "only" && (CONDITIONS.contains(&next) || count) {
            return None;
        }
        let supported = QUANTIFIERS
            .iter()
            .any(|(w, g)| *g == group && has_word(words, w));
        (!supported).then(|| {
            format!("unsupported: the quantifier \"{word}\" is not supported by the best-matching context window")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_sorted_for_binary_search() {
        assert!(COMPARISONS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(QUANTIFIERS.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
