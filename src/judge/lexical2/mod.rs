//! `lexical-2`: the default judge, deterministic and offline: the token share of `lexical-1`
//! against the best-matching context window, and hard checks that see contradictions which
//! reuse the context's words.
//!
//! The context is split into sentences with the claim splitter ([`split_claims`]); a claim is
//! one sentence of the answer. Words are the UAX #29 words, lowercased, `’` read as `'`.
//! - **Content tokens**: words that are neither stop words ([`crate::judge::stop_words::STOP_WORDS`] of `lexical-1`) nor
//!   negations ([`text::NEGATIONS`]); numbers normalised (below); spelled-out numbers
//!   (`two` .. `twenty`, `thirty` .. `ninety`, `hundred`, `thousand`, `million`, `billion`)
//!   read as digits; other words Snowball-stemmed when `stem` is on.
//! - **Numbers**: group separators and trailing decimal zeros go (`10,000` = `10000`, `3.50`
//!   = `3.5`), a version's `v` goes (`v1.2.3` = `1.2.3`), dates are their numbers
//!   (`2024-01-05` states 2024, 1 and 5). A unit attached to a number (`5GiB`, `5 GiB`, `40%`,
//!   `40 percent`, `$3.50`, `30 days`; the list is in `text.rs`) makes it a quantity.
//!
//! Hard checks, each named in the verdict's reason; any failure is grade 0:
//! 1. **polarity** (`contradicted: ...`): the best-matching context sentence is the one sharing
//!    most of the claim's content tokens. A negation (`not`, `no`, `never`, `cannot`,
//!    `without`, `neither`, `nor`, `none`, `nothing`, `nobody`, `nowhere`, any `n't`, `fail(s)
//!    to`) applies to the next content word within four words and the same clause (no `,` `;`
//!    `:` `.` `!` `?` between them). The claim is contradicted when
//!    a content token it shares with that sentence occurs negated more often in one and
//!    asserted more often in the other (an occurrence moved from asserted to negated, or
//!    back; when several sentences tie as best, all of them must contradict it).
//! 2. **numbers** (`unsupported: number N not in the context`): every number of the claim
//!    must be stated somewhere in the context (`one` is exempt: it is also a pronoun); a
//!    quantity with a unit must not be stated in the context only with other units
//!    (`unsupported: quantity 5 MiB ...` when the context says `5 GiB`).
//! 3. **names** (`unsupported: name X not in the context`): identifiers (a letter and a digit
//!    `S3`, an inner capital `BucketNotEmpty`, an underscore `max_keys`, all capitals `API`)
//!    and runs of capitalised words (`Marie Curie`; a sentence's first word counts only in a
//!    run of two or more that does not start with a stop word) must occur in the context as
//!    the same words in the same order, case-insensitively, `'s` ignored.
//!
//! Then the **window share**: the share of the claim's distinct content tokens found in the
//! best window of [`WINDOW_SENTENCES`] consecutive context sentences (not the whole context,
//! which would "support" any sentence made of its words). Grade 2 (supported) when the share
//! is `>= threshold`, 1 (`partial: ...`) when `>= threshold / 2`, else 0 (`unsupported: ...`).
//! The score is the share, divided by 4 when a hard check failed (a continuous support
//! score for ranking). A claim without content tokens, numbers or names asserts nothing
//! checkable: score 1.0, grade 2. Relevance is judged as by `lexical-1`.

pub mod text;

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::metrics::claims::split_claims;
use text::{Analysed, Reading, analyse_with};

/// The judge's version: part of its identity and cache key.
pub const LEXICAL2_JUDGE_VERSION: &str = "lexical-2";

/// How many consecutive context sentences a window of the share holds.
pub const WINDOW_SENTENCES: usize = 2;

/// What a later version adds to `lexical-2`'s checks (the default: `lexical-2` exactly).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rules {
    /// A negation word inside a capitalised name (`Never Say Never`) is no negation
    /// ([`text::analyse_with`]).
    pub names_keep_negations: bool,
    /// A run of capitalised words ends at punctuation and leaves out sentence openers
    /// ([`text::Reading::names_break`]).
    pub names_break: bool,
    /// A negation counts against a context sentence only when the sentence is about the
    /// claim's subject: it has every content word that precedes the flipped word in the
    /// claim's clause ([`subject_of`]).
    pub negation_subject: bool,
    /// A claim of at most this many content tokens needs every one of them in the best window
    /// (the threshold is 100% for it); 0: no such rule.
    pub short_claim_tokens: usize,
}

/// The `lexical-2` verdict on one claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Support2 {
    /// The window share, divided by 4 when a hard check failed; in [0, 1].
    pub score: f64,
    /// 2 supported, 1 partly (the share is short), 0 contradicted or unsupported.
    pub grade: u8,
    /// `grade == 2`.
    pub supported: bool,
    /// Why the claim is not supported (None when it is), or why it asserts nothing.
    pub reason: Option<String>,
    /// The claim asserts nothing checkable (`lexical-3`); never set by `lexical-2`.
    pub asserts_nothing: bool,
}

/// A context analysed once, to judge many claims against it.
#[derive(Debug, Clone)]
pub struct Prepared2 {
    threshold: f64,
    stem: bool,
    rules: Rules,
    sentences: Vec<Analysed>,
    /// Normalised value -> the units the context states it with (empty: only bare).
    quantities: FxHashMap<String, FxHashSet<&'static str>>,
    /// Every sentence's words, each sentence as ` w1 w2 ... ` (for names).
    words: String,
}

fn stemmer(stem: bool) -> Option<Stemmer> {
    stem.then(|| Stemmer::create(Algorithm::English))
}

impl Rules {
    fn reading(self) -> Reading {
        Reading {
            names_keep_negations: self.names_keep_negations,
            names_break: self.names_break,
        }
    }
}

/// A claim judged, with what a later version checks further: the claim's analysis and the
/// best-matching window (sentence indices; empty without sentences).
#[derive(Debug, Clone)]
pub struct Judged2 {
    /// The verdict of `lexical-2`'s checks.
    pub support: Support2,
    /// The claim as analysed.
    pub claim: Analysed,
    /// The sentences of the window with the best share.
    pub window: std::ops::Range<usize>,
}

impl Prepared2 {
    /// Analyses `context` for judging claims with `threshold` and `stem`.
    pub fn new(context: &str, threshold: f64, stem: bool) -> Prepared2 {
        Prepared2::with_rules(context, threshold, stem, Rules::default())
    }

    /// Analyses `context` for judging claims with `threshold`, `stem` and `rules`.
    pub fn with_rules(context: &str, threshold: f64, stem: bool, rules: Rules) -> Prepared2 {
        let stemmer = stemmer(stem);
        let sentences: Vec<Analysed> = split_claims(context)
            .iter()
            .map(|sentence| analyse_with(sentence, stemmer.as_ref(), rules.reading()))
            .collect();
        let mut quantities: FxHashMap<String, FxHashSet<&'static str>> = FxHashMap::default();
        let mut words = String::from(" ");
        for sentence in &sentences {
            for quantity in &sentence.quantities {
                let units = quantities.entry(quantity.value.clone()).or_default();
                units.extend(quantity.unit);
            }
            for word in &sentence.words {
                words.push_str(word);
                words.push(' ');
            }
            words.push_str("| ");
        }
        Prepared2 {
            threshold,
            stem,
            rules,
            sentences,
            quantities,
            words,
        }
    }

    /// Judges one claim against this context.
    pub fn support(&self, claim: &str) -> Support2 {
        self.judge(claim).support
    }

    /// The analysed context sentence `i`.
    pub fn sentence(&self, i: usize) -> &Analysed {
        &self.sentences[i]
    }

    /// Judges one claim against this context, keeping its analysis and best window.
    pub fn judge(&self, claim: &str) -> Judged2 {
        let stemmer = stemmer(self.stem);
        let claim = analyse_with(claim, stemmer.as_ref(), self.rules.reading());
        let tokens = sorted_tokens(&claim);
        let presence: Vec<Vec<bool>> = self
            .sentences
            .iter()
            .map(|s| tokens.iter().map(|t| s.tokens.contains(*t)).collect())
            .collect();
        let support = self.support_analysed(&claim, &tokens, &presence);
        let window = best_window(tokens.len(), &presence);
        Judged2 {
            support,
            claim,
            window,
        }
    }

    /// `lexical-2`'s checks of `claim`; `presence[sentence][token]` of its sorted `tokens`.
    fn support_analysed(
        &self,
        claim: &Analysed,
        tokens: &[&String],
        presence: &[Vec<bool>],
    ) -> Support2 {
        let mut contradictions = Vec::new();
        if let Some(flipped) = self.polarity(claim, tokens, presence) {
            contradictions.push(flipped);
        }
        let mut missing = self.missing_quantities(claim);
        missing.extend(self.missing_names(claim));
        let share = window_share(tokens.len(), presence);
        let checkable =
            !tokens.is_empty() || !claim.quantities.is_empty() || !claim.names.is_empty();
        if !checkable {
            return Support2 {
                asserts_nothing: false,
                score: 1.0,
                grade: 2,
                supported: true,
                reason: None,
            };
        }
        if !contradictions.is_empty() || !missing.is_empty() {
            let mut parts = Vec::new();
            if !contradictions.is_empty() {
                parts.push(format!("contradicted: {}", contradictions.join("; ")));
            }
            if !missing.is_empty() {
                parts.push(format!("unsupported: {}", missing.join("; ")));
            }
            return Support2 {
                asserts_nothing: false,
                score: share / 4.0,
                grade: 0,
                supported: false,
                reason: Some(parts.join("; ")),
            };
        }
        let percent = |x: f64| format!("{:.0}%", x * 100.0);
        let short = tokens.len() <= self.rules.short_claim_tokens;
        let threshold = if short { 1.0 } else { self.threshold };
        let (grade, reason) = if share >= threshold {
            (2, None)
        } else {
            let of_short = if short {
                format!(
                    " for a claim of {} content words or fewer",
                    self.rules.short_claim_tokens
                )
            } else {
                String::new()
            };
            let what = format!(
                "{} of the claim's words are in the best-matching context window (threshold {}{of_short})",
                percent(share),
                percent(threshold)
            );
            if share >= threshold / 2.0 {
                (1, Some(format!("partial: {what}")))
            } else {
                (0, Some(format!("unsupported: only {what}")))
            }
        };
        Support2 {
            asserts_nothing: false,
            score: share,
            grade,
            supported: grade == 2,
            reason,
        }
    }

    /// The polarity contradiction with the best-matching sentence(s), if any.
    fn polarity(
        &self,
        claim: &Analysed,
        tokens: &[&String],
        presence: &[Vec<bool>],
    ) -> Option<String> {
        let counts: Vec<usize> = presence
            .iter()
            .map(|p| p.iter().filter(|&&b| b).count())
            .collect();
        let best = counts.iter().copied().max().filter(|&n| n > 0)?;
        let mut first = None;
        for (sentence, _) in self
            .sentences
            .iter()
            .zip(&counts)
            .filter(|(_, n)| **n == best)
        {
            let flipped = tokens.iter().find(|t| {
                let (Some(c), Some(s)) = (claim.polarity.get(**t), sentence.polarity.get(**t))
                else {
                    return false;
                };
                // An occurrence moved from asserted to negated, or back.
                let moved = (c.0 > s.0 && s.1 > c.1) || (c.1 > s.1 && s.0 > c.0);
                moved
                    && (!self.rules.negation_subject
                        || subject_of(claim, t)
                            .iter()
                            .all(|w| sentence.tokens.contains(*w)))
            });
            match flipped {
                None => return None,
                Some(token) if first.is_none() => {
                    let written = &claim.written[token.as_str()];
                    let (claim_negated, _) = claim.polarity[token.as_str()];
                    let (sentence_negated, _) = sentence.polarity[token.as_str()];
                    first = Some(if claim_negated > sentence_negated {
                        format!(
                            "the claim negates \"{written}\", which the best-matching context sentence asserts"
                        )
                    } else {
                        format!(
                            "the claim asserts \"{written}\", which the best-matching context sentence negates"
                        )
                    });
                }
                Some(_) => {}
            }
        }
        first
    }

    /// The claim's numbers and quantities the context does not state.
    fn missing_quantities(&self, claim: &Analysed) -> Vec<String> {
        let mut missing = Vec::new();
        for quantity in claim.quantities.iter().filter(|q| !q.weak) {
            let message = match (self.quantities.get(&quantity.value), quantity.unit) {
                (None, _) => format!("number {} not in the context", quantity.written),
                (Some(units), Some(unit)) if !units.is_empty() && !units.contains(unit) => {
                    let mut stated: Vec<&str> = units.iter().copied().collect();
                    stated.sort_unstable();
                    format!(
                        "quantity {} {unit} not in the context (it states {} {})",
                        quantity.value,
                        quantity.value,
                        stated.join(" / ")
                    )
                }
                _ => continue,
            };
            if !missing.contains(&message) {
                missing.push(message);
            }
        }
        missing
    }

    /// The claim's names and identifiers the context does not contain.
    fn missing_names(&self, claim: &Analysed) -> Vec<String> {
        let mut missing = Vec::new();
        for name in &claim.names {
            let phrase = format!(" {} ", name.words.join(" "));
            let message = format!("name {} not in the context", name.written);
            if !self.words.contains(&phrase) && !missing.contains(&message) {
                missing.push(message);
            }
        }
        missing
    }
}

fn sorted_tokens(claim: &Analysed) -> Vec<&String> {
    let mut tokens: Vec<&String> = claim.tokens.iter().collect();
    tokens.sort();
    tokens
}

/// The subject of `token` in `claim`: the content tokens before its first occurrence in the
/// same clause (`Archive objects are not readable` -> `archiv`, `object` for `readabl`).
pub fn subject_of<'a>(claim: &'a Analysed, token: &str) -> Vec<&'a String> {
    let Some(at) = claim.sequence.iter().position(|(t, _)| t == token) else {
        return Vec::new();
    };
    let clause = claim.sequence[at].1;
    claim.sequence[..at]
        .iter()
        .filter(|(_, c)| *c == clause)
        .map(|(t, _)| t)
        .collect()
}

/// The window (sentence indices) with the best share, the first of equals.
fn best_window(claim_tokens: usize, presence: &[Vec<bool>]) -> std::ops::Range<usize> {
    let windows = presence.len().saturating_sub(WINDOW_SENTENCES - 1).max(1);
    let mut best = (0, 0..presence.len().min(WINDOW_SENTENCES));
    for start in 0..windows.min(presence.len()) {
        let window = start..(start + WINDOW_SENTENCES).min(presence.len());
        let found = (0..claim_tokens)
            .filter(|&t| presence[window.clone()].iter().any(|sentence| sentence[t]))
            .count();
        if found > best.0 {
            best = (found, window);
        }
    }
    best.1
}

/// The best share of `claim_tokens` tokens over windows of [`WINDOW_SENTENCES`] sentences;
/// `presence[sentence][token]`. 0 without sentences; 1 without tokens.
pub(crate) fn window_share(claim_tokens: usize, presence: &[Vec<bool>]) -> f64 {
    if claim_tokens == 0 {
        return 1.0;
    }
    let windows = presence.len().saturating_sub(WINDOW_SENTENCES - 1).max(1);
    (0..windows.min(presence.len()))
        .map(|start| {
            let window = &presence[start..(start + WINDOW_SENTENCES).min(presence.len())];
            let found = (0..claim_tokens)
                .filter(|&t| window.iter().any(|sentence| sentence[t]))
                .count();
            found as f64 / claim_tokens as f64
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests;
