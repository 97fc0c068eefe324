//! Reference-based answer metrics, computed without a judge.
//!
//! - `answer_contains`: 1.0 when the gold substring occurs in the answer after both are
//!   lowercased (Unicode `to_lowercase`) and every whitespace run is collapsed to one space
//!   (leading and trailing whitespace removed); else 0.0. A substring that is empty after this
//!   normalisation is never found (0.0): it is a data error the loaders should reject.
//! - `answer_exact` / `answer_f1`: SQuAD-style, over [`normalize_answer`], the normalisation
//!   of the official SQuAD v1.1 evaluation script: lowercase, remove ASCII punctuation
//!   (Python's `string.punctuation`), replace the articles `a`, `an`, `the` standing as whole
//!   words (`\b(a|an|the)\b`) by a space, collapse whitespace. F1 is the harmonic mean of token
//!   precision and recall with multiset overlap; when either side has no tokens, F1 is 1.0 if
//!   both are empty, else 0.0 (the SQuAD v2.0 script's rule).
//! - `answer_length`: the number of UAX #29 words (`unicode_words`); lower is better.

use std::collections::HashMap;

use unicode_segmentation::UnicodeSegmentation;

/// 1.0 when `substring` occurs in `answer`, case- and whitespace-insensitively; else 0.0.
pub fn answer_contains(answer: &str, substring: &str) -> f64 {
    let needle = fold(substring);
    indicator(!needle.is_empty() && fold(answer).contains(&needle))
}

fn fold(text: &str) -> String {
    text.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn indicator(condition: bool) -> f64 {
    if condition { 1.0 } else { 0.0 }
}

/// The SQuAD v1.1 answer normalisation (see the module documentation).
pub fn normalize_answer(text: &str) -> String {
    let lower: String = text
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_ascii_punctuation())
        .collect();
    // `\b(a|an|the)\b` with Python's Unicode `\w` (alphanumerics and `_`): replace whole
    // runs of word characters that are articles.
    let mut spaced = String::with_capacity(lower.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if matches!(word.as_str(), "a" | "an" | "the") {
            out.push(' ');
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in lower.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut spaced);
            spaced.push(c);
        }
    }
    flush(&mut word, &mut spaced);
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// 1.0 when the normalised answer equals the normalised reference; else 0.0.
pub fn answer_exact(answer: &str, reference: &str) -> f64 {
    indicator(normalize_answer(answer) == normalize_answer(reference))
}

/// SQuAD token F1 between the normalised answer and reference.
pub fn answer_f1(answer: &str, reference: &str) -> f64 {
    let predicted = normalize_answer(answer);
    let gold = normalize_answer(reference);
    let predicted: Vec<&str> = predicted.split_whitespace().collect();
    let gold: Vec<&str> = gold.split_whitespace().collect();
    if predicted.is_empty() || gold.is_empty() {
        return indicator(predicted.is_empty() && gold.is_empty());
    }
    let mut gold_counts: HashMap<&str, usize> = HashMap::new();
    for token in &gold {
        *gold_counts.entry(token).or_default() += 1;
    }
    let mut same = 0usize;
    for token in &predicted {
        if let Some(count) = gold_counts.get_mut(token).filter(|count| **count > 0) {
            *count -= 1;
            same += 1;
        }
    }
    if same == 0 {
        return 0.0;
    }
    let precision = same as f64 / predicted.len() as f64;
    let recall = same as f64 / gold.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// Number of Unicode words (UAX #29) in the answer.
pub fn answer_length(answer: &str) -> f64 {
    answer.unicode_words().count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn contains_folds_case_and_whitespace() {
        let answer = "A multipart upload is aborted after\n  Three   FAILED parts.";
        assert_eq!(answer_contains(answer, "three failed parts"), 1.0);
        assert_eq!(answer_contains(answer, "  three\tfailed  "), 1.0);
        assert_eq!(answer_contains(answer, "four failed parts"), 0.0);
        assert_eq!(answer_contains(answer, "threefailed"), 0.0);
        assert_eq!(answer_contains(answer, " \n "), 0.0);
        assert_eq!(answer_contains("", "x"), 0.0);
    }

    #[test]
    fn normalisation_matches_squad() {
        assert_eq!(
            normalize_answer("The Cat  sat, on a mat!"),
            "cat sat on mat"
        );
        assert_eq!(normalize_answer("An apple\tthe\nend"), "apple end");
        assert_eq!(normalize_answer("theory anthem a.b"), "theory anthem ab");
        assert_eq!(normalize_answer("the-cat"), "thecat"); // punctuation goes first
        assert_eq!(normalize_answer("Café’s “The” answer"), "café’s “ ” answer");
        assert_eq!(normalize_answer("  ...  "), "");
    }

    #[test]
    fn exact_match_after_normalisation() {
        assert_eq!(answer_exact("The Eiffel Tower.", "eiffel tower"), 1.0);
        assert_eq!(
            answer_exact("Eiffel Tower", "the Eiffel tower in Paris"),
            0.0
        );
        assert_eq!(answer_exact("", "the"), 1.0); // both normalise to ""
    }

    #[test]
    fn f1_hand_computed_cases() {
        // p = 2/2, r = 2/3: 2 * (1 * 2/3) / (1 + 2/3) = 0.8
        assert!(close(answer_f1("the cat sat", "a cat sat down"), 0.8));
        assert!(close(answer_f1("Cat sat!", "a cat, sat."), 1.0));
        // "cat cat" vs "cat": overlap 1 (multiset), p = 1/2, r = 1: F1 = 2/3
        assert!(close(answer_f1("cat cat", "the cat"), 2.0 / 3.0));
        // p = 1/3, r = 1/2: F1 = 2 * 1/6 / (5/6) = 0.4
        assert!(close(answer_f1("Paris, France today", "in Paris"), 0.4));
        assert_eq!(answer_f1("dog", "cat"), 0.0);
    }

    #[test]
    fn f1_empty_sides() {
        assert_eq!(answer_f1("", ""), 1.0);
        assert_eq!(answer_f1("The.", "an"), 1.0);
        assert_eq!(answer_f1("", "cat"), 0.0);
        assert_eq!(answer_f1("cat", "the"), 0.0);
    }

    #[test]
    fn length_counts_unicode_words() {
        assert_eq!(answer_length(""), 0.0);
        assert_eq!(answer_length("It costs 3.5 euros, doesn't it?"), 6.0);
        assert_eq!(answer_length("  -- ... "), 0.0);
    }
}
