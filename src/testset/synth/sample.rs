//! Which documents `ragate synth` drafts from: a seeded sample stratified by document length
//! (short to long, in [`STRATA`] equal parts), the question classes in turn, and for every
//! `multi-topic` draft the document that shares the most rare words with the sampled one.

use std::collections::BTreeSet;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use crate::judge::draft::QuestionClass;
use crate::stats;

/// How many length strata the eligible documents are split into.
pub(super) const STRATA: usize = 4;

/// A document needs at least this many content words to be drafted from.
pub(super) const MIN_CONTENT_WORDS: usize = 12;

/// One draft to ask for: its class and document(s) (indices into the corpus).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Slot {
    pub class: QuestionClass,
    /// The sampled document.
    pub primary: usize,
    /// The second document of a `multi-topic` draft.
    pub partner: Option<usize>,
    /// The length stratum of the primary document (0 the shortest).
    pub stratum: usize,
}

/// The sample, and why it is smaller than asked, when it is.
#[derive(Debug)]
pub(super) struct Sampled {
    pub slots: Vec<Slot>,
    /// Documents long enough to draft from.
    pub eligible: usize,
    pub notes: Vec<String>,
}

/// What the sample needs to know of each document: its content tokens (the lexical judge's
/// analysis) and whether it states a number.
pub(super) struct Profile {
    pub tokens: BTreeSet<String>,
    pub has_number: bool,
}

/// Draws `count` slots from documents `profiles`, classes cycling through `classes`; strata
/// cycle per round of classes, so that every class is spread over short and long documents. A
/// document is drafted from once at most; a class with no document left is noted and skipped.
pub(super) fn sample(
    profiles: &[Profile],
    count: usize,
    classes: &[QuestionClass],
    seed: u64,
) -> Sampled {
    let mut eligible: Vec<usize> = (0..profiles.len())
        .filter(|&i| profiles[i].tokens.len() >= MIN_CONTENT_WORDS)
        .collect();
    eligible.sort_by_key(|&i| (profiles[i].tokens.len(), i));
    let mut strata = strata(&eligible, seed);
    let strata_count = strata.len();
    // The inverted index is built only when a multi-topic draft needs a partner.
    let partners = classes
        .contains(&QuestionClass::MultiTopic)
        .then(|| Partners::new(profiles));
    let mut slots = Vec::new();
    let mut notes = Vec::new();
    let mut exhausted: BTreeSet<QuestionClass> = BTreeSet::new();
    for i in 0..count {
        let class = classes[i % classes.len()];
        if exhausted.contains(&class) {
            continue;
        }
        let first = (i / classes.len()) % strata_count;
        let wanted = |doc: &usize| class != QuestionClass::Numeric || profiles[*doc].has_number;
        let Some((stratum, primary)) = pick(&mut strata, first, wanted) else {
            exhausted.insert(class);
            notes.push(format!(
                "no document left for a {} question: fewer {} drafts than asked",
                class.name(),
                class.name()
            ));
            continue;
        };
        let partner = match class {
            QuestionClass::MultiTopic => match partners.as_ref().and_then(|p| p.best(primary)) {
                Some(partner) => Some(partner),
                None => {
                    notes.push(format!(
                        "document {primary} shares no rare word with another: no multi-topic draft from it"
                    ));
                    continue;
                }
            },
            _ => None,
        };
        slots.push(Slot {
            class,
            primary,
            partner,
            stratum,
        });
    }
    Sampled {
        slots,
        eligible: eligible.len(),
        notes,
    }
}

/// The eligible documents (sorted short to long) in [`STRATA`] equal parts (fewer when there are
/// fewer documents, at least one), each shuffled with the seed.
fn strata(eligible: &[usize], seed: u64) -> Vec<Vec<usize>> {
    let strata_count = STRATA.min(eligible.len()).max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..strata_count)
        .map(|s| {
            let range = s * eligible.len() / strata_count..(s + 1) * eligible.len() / strata_count;
            let mut members = eligible[range].to_vec();
            stats::shuffle(&mut members, &mut rng);
            members
        })
        .collect()
}

/// The first wanted document of the strata from stratum `first` on (wrapping round), taken out
/// of its stratum: (stratum, document).
fn pick(
    strata: &mut [Vec<usize>],
    first: usize,
    wanted: impl Fn(&usize) -> bool,
) -> Option<(usize, usize)> {
    let count = strata.len();
    (0..count).map(|step| (first + step) % count).find_map(|s| {
        let at = strata[s].iter().position(&wanted)?;
        Some((s, strata[s].remove(at)))
    })
}

/// An inverted index of the documents' tokens, to find a multi-topic partner.
struct Partners<'a> {
    profiles: &'a [Profile],
    postings: FxHashMap<&'a str, Vec<usize>>,
}

impl<'a> Partners<'a> {
    fn new(profiles: &'a [Profile]) -> Self {
        let mut postings: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (doc, profile) in profiles.iter().enumerate() {
            for token in &profile.tokens {
                postings.entry(token.as_str()).or_default().push(doc);
            }
        }
        Partners { profiles, postings }
    }

    /// The eligible document other than `doc` with the largest sum of idf, ln(N / df), over the
    /// tokens it shares with `doc` (tokens in more than half of the documents left out); the
    /// lowest index among equals. None when it shares no such token with any.
    fn best(&self, doc: usize) -> Option<usize> {
        let documents = self.profiles.len();
        let mut scores: FxHashMap<usize, f64> = FxHashMap::default();
        for token in &self.profiles[doc].tokens {
            let posting = &self.postings[token.as_str()];
            if posting.len() * 2 > documents {
                continue;
            }
            let idf = (documents as f64 / posting.len() as f64).ln();
            for &other in posting {
                if other != doc && self.profiles[other].tokens.len() >= MIN_CONTENT_WORDS {
                    *scores.entry(other).or_default() += idf;
                }
            }
        }
        scores
            .into_iter()
            .filter(|&(_, score)| score > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(other, _)| other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document of `n` distinct content words `w<start>`..; `extra` words added.
    fn profile(start: usize, n: usize, extra: &[&str], has_number: bool) -> Profile {
        let mut tokens: BTreeSet<String> = (start..start + n).map(|i| format!("w{i}")).collect();
        tokens.extend(extra.iter().map(|w| w.to_string()));
        Profile { tokens, has_number }
    }

    fn corpus() -> Vec<Profile> {
        (0..40)
            .map(|i| profile(i * 100, 12 + i, &[], i % 3 == 0))
            .collect()
    }

    #[test]
    fn the_sample_is_seeded_spread_over_lengths_and_never_repeats_a_document() {
        let profiles = corpus();
        let classes = [QuestionClass::Literal, QuestionClass::Paraphrased];
        let a = sample(&profiles, 16, &classes, 7);
        assert_eq!(a.slots, sample(&profiles, 16, &classes, 7).slots);
        assert_ne!(a.slots, sample(&profiles, 16, &classes, 8).slots);
        assert_eq!(a.slots.len(), 16);
        let docs: BTreeSet<usize> = a.slots.iter().map(|s| s.primary).collect();
        assert_eq!(docs.len(), 16);
        for class in classes {
            let strata: BTreeSet<usize> = a
                .slots
                .iter()
                .filter(|s| s.class == class)
                .map(|s| s.stratum)
                .collect();
            assert_eq!(strata.len(), STRATA, "{class:?} over every stratum");
        }
        // Stratum s holds the s-th quarter of the documents by length (profile i has 12 + i).
        for slot in &a.slots {
            assert_eq!(slot.primary / 10, slot.stratum, "{slot:?}");
        }
    }

    #[test]
    fn numeric_questions_come_from_documents_with_numbers_and_run_out_with_a_note() {
        let profiles = corpus();
        let sampled = sample(&profiles, 40, &[QuestionClass::Numeric], 1);
        assert!(sampled.slots.iter().all(|s| profiles[s.primary].has_number));
        assert_eq!(sampled.slots.len(), 14, "documents 0, 3, ..., 39");
        assert_eq!(sampled.notes.len(), 1, "{:?}", sampled.notes);
        assert!(sampled.notes[0].contains("numeric"));
    }

    #[test]
    fn short_documents_are_not_drafted_from() {
        let mut profiles = corpus();
        profiles.push(profile(9_000, MIN_CONTENT_WORDS - 1, &[], true));
        let sampled = sample(&profiles, 100, &[QuestionClass::Literal], 3);
        assert_eq!(sampled.eligible, 40);
        assert!(sampled.slots.iter().all(|s| s.primary != 40));
    }

    #[test]
    fn a_multi_topic_partner_shares_the_rarest_words() {
        let mut profiles = corpus();
        // 40 and 41 share two rare words; 42 shares one of them and a common one.
        profiles.push(profile(5_000, 12, &["rare1", "rare2", "common"], false));
        profiles.push(profile(6_000, 12, &["rare1", "rare2"], false));
        profiles.push(profile(7_000, 12, &["rare1", "common"], false));
        for profile in profiles.iter_mut().take(30) {
            profile.tokens.insert("common".to_string());
        }
        let partners = Partners::new(&profiles);
        assert_eq!(partners.best(40), Some(41));
        assert_eq!(partners.best(42), Some(40), "rare1 ties: the lowest index");
        assert_eq!(partners.best(0), None, "only the common word is shared");
    }
}
