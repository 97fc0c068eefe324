//! The extractive generator: the answer is the one or two sentences of the top contexts that
//! share the most terms with the query. No model, no randomness: same input, same bytes.

use std::collections::BTreeSet;

use crate::retrieve::qid_hash;
use crate::text;

/// How many of the top documents become contexts.
pub const CONTEXT_DOCS: usize = 3;

/// Splits text into sentences: after `.`, `!` or `?` followed by whitespace, and at line breaks.
/// Pieces without a letter or digit are dropped.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            let ends = matches!(c, '.' | '!' | '?')
                && chars.peek().is_none_or(|&(_, next)| next.is_whitespace());
            if ends {
                let end = at + c.len_utf8();
                pieces.push(&line[start..end]);
                start = end;
            }
        }
        pieces.push(&line[start..]);
    }
    pieces
        .into_iter()
        .map(str::trim)
        .filter(|piece| piece.chars().any(char::is_alphanumeric))
        .collect()
}

/// The answer to `query` from `contexts`: the sentence with the most distinct query terms, and
/// the runner-up when it has at least half as many, in context order. Without any overlap,
/// the first sentence of the first context; without contexts, the empty string.
pub fn answer(query: &str, contexts: &[String]) -> String {
    let query_terms: BTreeSet<String> = text::tokens(query).into_iter().collect();
    let all: Vec<&str> = contexts
        .iter()
        .flat_map(|context| sentences(context))
        .collect();
    let overlaps: Vec<usize> = all
        .iter()
        .map(|sentence| {
            let terms: BTreeSet<String> = text::tokens(sentence).into_iter().collect();
            terms.intersection(&query_terms).count()
        })
        .collect();
    // Highest overlap first; among equals the earlier sentence (a stable sort keeps it so).
    let mut order: Vec<usize> = (0..all.len()).collect();
    order.sort_by(|&a, &b| overlaps[b].cmp(&overlaps[a]));
    let Some(&best) = order.first() else {
        return String::new();
    };
    if overlaps[best] == 0 {
        return all[0].to_string();
    }
    let mut chosen = vec![best];
    if let Some(&second) = order.get(1)
        && overlaps[second] > 0
        && overlaps[second] * 2 >= overlaps[best]
        && all[second] != all[best]
    {
        chosen.push(second);
    }
    chosen.sort_unstable();
    chosen
        .iter()
        .map(|&index| all[index])
        .collect::<Vec<_>>()
        .join(" ")
}

/// For the degraded variant: a claim found in no context (an invented figure) for about half
/// of the queries, chosen by a hash of the qid.
pub fn unsupported_sentence(qid: &str) -> Option<String> {
    let hash = qid_hash(qid) >> 32;
    if hash % 2 == 1 {
        return None;
    }
    let figure = 1000 + hash % 9000;
    let sentence = match (hash >> 1) % 3 {
        0 => format!("Quarterly zeppelin audits certify {figure} pelican quorums."),
        1 => format!("Telemetry from {figure} orbiting greenhouses confirms this."),
        _ => format!("Marmalade benchmarks showed a {figure}-fold speedup on Tuesdays."),
    };
    Some(sentence)
}

/// Word counts standing in for model tokens: the prompt is the query plus the contexts.
pub fn usage(query: &str, contexts: &[String], answer: &str) -> (usize, usize) {
    let words = |text: &str| text.split_whitespace().count();
    let prompt = words(query) + contexts.iter().map(|context| words(context)).sum::<usize>();
    (prompt, words(answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_sentences_but_not_decimals() {
        assert_eq!(
            sentences("Version 2.5 is out. Really? Yes!\nNew line without stop"),
            [
                "Version 2.5 is out.",
                "Really?",
                "Yes!",
                "New line without stop"
            ]
        );
    }

    #[test]
    fn picks_the_best_sentences_in_context_order() {
        let contexts = vec![
            "Buckets hold objects. A multipart upload is aborted after three failed parts."
                .to_string(),
            "Failed uploads are retried. Parts are uploaded in parallel.".to_string(),
        ];
        let answer = answer(
            "when is a multipart upload aborted after failed parts",
            &contexts,
        );
        assert_eq!(
            answer,
            "A multipart upload is aborted after three failed parts."
        );
        let answer = super::answer("failed upload parts", &contexts);
        assert_eq!(
            answer,
            "A multipart upload is aborted after three failed parts. Failed uploads are retried."
        );
    }

    #[test]
    fn unsupported_sentences_go_to_about_half_of_the_queries() {
        let count = (0..400)
            .filter(|i| unsupported_sentence(&format!("q{i}")).is_some())
            .count();
        assert!((160..=240).contains(&count), "{count}");
    }
}
