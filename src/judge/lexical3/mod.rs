//! `lexical-3`: `lexical-2` ([`crate::judge::lexical2`]) with the fixes of measured error classes
//! on real LLM answers (issue 45). Every rule below is on top of `lexical-2`'s checks, which it
//! runs (numbers, polarity scoped as rule 6 says, names, the window share):
//! 1. **joins** ([`text::mend_joins`]): a `.` `!` or `?` between a lowercase letter, a digit,
//!    `)` or a closing quote and an uppercase letter (`released in 2001.Anna Berg`, passages
//!    concatenated without a space) is read with a space after it, in claims and contexts alike,
//!    so that the words and sentences part there. Decimals (`3.5`), versions (`v2.1`),
//!    abbreviations (`U.S.`) and domain names (`example.com`) have no such join.
//! 2. **yes / no** ([`text::strip_opening`]): a leading `Yes,` or `No,` (any case, `,` `.`
//!    `!` `;` or `:` after it) is dropped and the claim judged by its clause; a bare `yes` or
//!    `no` asserts nothing checkable: supported, grade 1, reason [`BARE_YES_NO`] (left out of
//!    binary faithfulness's claim count). `lexical-2` rejected a bare `yes` and passed a bare `no`.
//! 3. **names with negation words** ([`Rules::names_keep_negations`]): a negation word
//!    inside a run of capitalised words (`Never Say Never`, `No Doubt`) is part of a name, not a
//!    negation.
//! 4. **meta sentences** ([`text::strip_opening`], [`text::is_meta`]): a leading clause (up to
//!    `,` or `:`, or up to `that`) whose content words are all meta words
//!    ([`text::META_WORDS`]: `Based on the provided context,`, `In summary,`, `The document
//!    says that`) is dropped and the rest judged; a sentence whose content words are all meta
//!    words (`Here is what the document says:`, `I hope this helps!`) asserts nothing:
//!    supported, grade 2, reason [`META_SENTENCE`] (left out of binary faithfulness's claim
//!    count).
//! 5. **names broken** ([`Rules::names_break`]): a run of capitalised words ends at
//!    punctuation (`Python, Go and Java` names `Go` and `Java`, not `Python Go`) and does not
//!    start with a sentence opener ([`crate::judge::lexical2::text::OPENERS`]: `However, Smart
//!    Tier` names `Smart Tier`; `I` is no name), so that a right answer is not "missing" a name
//!    the context never had.
//! 6. **negation scope by subject** ([`Rules::negation_subject`]): a word negated in the claim
//!    and asserted in the best-matching context sentence (or the reverse) is a contradiction
//!    only when that sentence is about the claim's subject: it has every content word that
//!    precedes the word in the claim's clause (`Archive objects are not readable immediately`
//!    is not contradicted by `[Cool] objects are readable immediately`).
//! 7. **comparisons** ([`window::WindowChecks::comparisons`]): a comparative, superlative or
//!    ordinal of the claim ([`window::COMPARISONS`], or a word in `-er` before `than`) must be
//!    in the best-matching window (the window of the share), or the claim must state two
//!    numbers, both in that window, whose order agrees with the word (`costs more ... $0.021
//!    against $0.0125`); else `unsupported: the comparison "cheaper" is not stated ...`, or
//!    `contradicted: the claim's numbers ... do not agree with "more"`. Bounds (`at most`) and
//!    words of time in their other uses (`before the date`, `later`) are not comparisons.
//!
//! Tried and off (docs/metrics.md has the figures; each lowered the development set's TPR):
//! - **short claims** ([`Rules::short_claim_tokens`] at [`SHORT_CLAIM_TOKENS`]): a claim of at
//!   most that many content tokens needs every one of them in the best window (threshold 100%),
//!   so that one invented word (`The chemist was also a pilot.`) cannot hide under the share
//!   threshold; it also rejects right paraphrases that add one word.
//! - **names in the window** ([`window::WindowChecks::names`]): every name of the claim in the
//!   best window, against entity swaps; it rejects right answers that join names from two
//!   passages.
//! - **quantifiers in the window** ([`window::WindowChecks::quantifiers`]): `all` `every`
//!   `each` `always`, `only`, `both`, `never` need a word of their group
//!   ([`window::QUANTIFIERS`]) in the best window; it rejects right answers that sum up
//!   (`Both groups showed damage`).
//!
//! Rules 2 and 4 set the verdict's `asserts_nothing`, which is how faithfulness knows to leave
//! such a claim out of its count; their reasons start with
//! [`crate::metrics::generation::NOTHING_CHECKABLE`] and are in the trace like every reason.

pub mod text;
pub mod window;

use crate::judge::lexical2::{Prepared2, Rules, Support2};
use window::WindowChecks;

/// The judge's version: part of its identity and cache key.
pub const LEXICAL3_JUDGE_VERSION: &str = "lexical-3";

/// The revision of `lexical-3`'s rules, part of its identity and cache key: 1 the rules 1 to 4
/// (2026-12-07), 2 with rules 5 to 7.
pub const LEXICAL3_RULES_REVISION: u32 = 2;

/// The short-claim rule as tried: a claim of at most this many content tokens needs all of them
/// in the best window (off in `lexical-3`).
pub const SHORT_CLAIM_TOKENS: usize = 3;

/// The reason of a bare `yes` or `no`.
pub const BARE_YES_NO: &str =
    "nothing checkable: a bare yes or no states nothing the contexts can support";

/// The reason of a meta sentence.
pub const META_SENTENCE: &str = "nothing checkable: a meta sentence (a preamble or a closing) asserts nothing about the contexts";

/// The `lexical-2` rules that `lexical-3` turns on.
pub const RULES: Rules = Rules {
    names_keep_negations: true,
    names_break: true,
    negation_subject: true,
    short_claim_tokens: 0,
};

/// The window checks that `lexical-3` turns on (names and quantifiers tried and off).
pub const CHECKS: WindowChecks = WindowChecks {
    names: false,
    comparisons: true,
    quantifiers: false,
};

/// A context analysed once, to judge many claims against it.
#[derive(Debug, Clone)]
pub struct Prepared3 {
    inner: Prepared2,
    checks: WindowChecks,
}

impl Prepared3 {
    /// Analyses `context` (joins mended) for judging claims with `threshold` and `stem`.
    pub fn new(context: &str, threshold: f64, stem: bool) -> Prepared3 {
        Prepared3::with_rules(context, threshold, stem, RULES, CHECKS)
    }

    /// Analyses `context` (joins mended) with `rules` and `checks` in place of `lexical-3`'s.
    pub fn with_rules(
        context: &str,
        threshold: f64,
        stem: bool,
        rules: Rules,
        checks: WindowChecks,
    ) -> Prepared3 {
        let context = text::mend_joins(context);
        Prepared3 {
            inner: Prepared2::with_rules(&context, threshold, stem, rules),
            checks,
        }
    }

    /// Judges one claim against this context.
    pub fn support(&self, claim: &str) -> Support2 {
        let claim = text::mend_joins(claim);
        let opened = text::strip_opening(&claim);
        if opened.bare_yes_no {
            return nothing(1, BARE_YES_NO);
        }
        if opened.meta {
            return nothing(2, META_SENTENCE);
        }
        let judged = self.inner.judge(opened.rest);
        if !judged.support.supported || judged.support.asserts_nothing {
            return judged.support;
        }
        let failures = window::failures(&self.inner, &judged, opened.rest, self.checks);
        if failures.is_empty() {
            return judged.support;
        }
        Support2 {
            score: judged.support.score / 4.0,
            grade: 0,
            supported: false,
            reason: Some(failures.join("; ")),
            asserts_nothing: false,
        }
    }
}

/// A supported verdict on a claim that asserts nothing checkable.
fn nothing(grade: u8, reason: &str) -> Support2 {
    Support2 {
        score: 1.0,
        grade,
        supported: true,
        reason: Some(reason.to_string()),
        asserts_nothing: true,
    }
}

#[cfg(test)]
mod tests;
