//! Context windows for a cross-encoder: a context longer than the model's input is cut into
//! windows of consecutive sentences that fit, each overlapping the previous one by a sentence, so
//! that a claim whose evidence straddles a cut is still seen whole in one window.

use std::ops::Range;

/// The windows (ranges of sentence indices) of sentences with `token_counts`, each holding as
/// many consecutive sentences as fit in `budget` tokens (at least one: a sentence longer than the
/// budget is a window of its own, which the tokenizer truncates). Each window after the first
/// starts with the last sentence of the one before, unless that window was a single sentence.
/// No sentences give one empty window (an empty context is still asked about).
pub fn windows(token_counts: &[usize], budget: usize) -> Vec<Range<usize>> {
    let n = token_counts.len();
    if n == 0 {
        let empty = 0..0;
        return vec![empty];
    }
    let mut windows = Vec::new();
    let mut start = 0;
    loop {
        let mut end = start;
        let mut total = 0;
        while end < n && (end == start || total + token_counts[end] <= budget) {
            total += token_counts[end];
            end += 1;
        }
        windows.push(start..end);
        if end == n {
            return windows;
        }
        start = if end - start > 1 { end - 1 } else { end };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_that_fits_is_one_window() {
        assert_eq!(windows(&[10, 20, 30], 60), vec![0..3]);
        assert_eq!(windows(&[], 60), vec![0..0]);
    }

    #[test]
    fn windows_overlap_by_one_sentence() {
        // 10+20 fit in 35, then 20 (overlap) + 10, then 10 (overlap) + 15.
        assert_eq!(windows(&[10, 20, 10, 15], 35), vec![0..2, 1..3, 2..4]);
    }

    #[test]
    fn a_sentence_longer_than_the_budget_is_a_window_of_its_own() {
        assert_eq!(windows(&[5, 100, 5, 5], 20), vec![0..1, 1..2, 2..4]);
        assert_eq!(windows(&[100], 20), vec![0..1]);
    }

    #[test]
    fn every_sentence_is_in_a_window_and_windows_advance() {
        let counts: Vec<usize> = (0..200).map(|i| (i * 37 % 23) + 1).collect();
        for budget in [1, 5, 24, 60, 1000] {
            let ws = windows(&counts, budget);
            let mut covered = vec![false; counts.len()];
            for (i, w) in ws.iter().enumerate() {
                assert!(!w.is_empty());
                let total: usize = counts[w.clone()].iter().sum();
                assert!(
                    w.len() == 1 || total <= budget,
                    "{w:?} holds {total} > {budget}"
                );
                if i > 0 {
                    assert!(w.start > ws[i - 1].start && w.start <= ws[i - 1].end);
                }
                covered[w.clone()].iter_mut().for_each(|c| *c = true);
            }
            assert!(covered.iter().all(|&c| c), "budget {budget}");
        }
    }
}
