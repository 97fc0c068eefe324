//! Judgments: what the qrels say about one document ([`Judgment`]), and the judged documents
//! of one query ([`Judgments`]: ids packed in one string, entries sorted by id, and a hash index
//! of entry numbers for lookup, a `hashbrown::HashTable`).
//!
//! Qrels hold hundreds of thousands of judgments; one allocation per doc id would cost more to
//! build and to free than the lookups they serve. Every retrieved document is looked up, and
//! most are not judged: the index answers such a miss without comparing any id.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// A relevance grade. Negative grades (trec_eval: pooled but not judged) are neither relevant
/// nor gain.
pub type Grade = i32;

/// What the qrels say about one document for one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judgment {
    /// Graded relevance, the gain of graded metrics (nDCG).
    pub grade: Grade,
    /// Binary relevance ("gold"), used by precision, recall, hit rate, MRR, MAP and R-precision.
    pub relevant: bool,
}

/// A retrieved document as the metrics read it: judged by the qrels (with its grade and binary
/// relevance), or not judged at all. One type for both, so that no metric can take an unjudged
/// document for one judged non-relevant: bpref skips the first and counts the second, judged@k
/// and RBP's residual count the first. The others read an unjudged document as a non-relevant
/// one without gain, through [`Ranked::relevant`] and [`Ranked::gain`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranked {
    /// The qrels judge the document.
    Judged(Judgment),
    /// The qrels do not judge the document.
    Unjudged,
}

impl Ranked {
    /// The document as the qrels judge it, or [`Ranked::Unjudged`].
    pub fn of(judgment: Option<Judgment>) -> Self {
        judgment.map_or(Ranked::Unjudged, Ranked::Judged)
    }

    /// Whether the document counts as relevant (an unjudged one does not).
    pub fn relevant(self) -> bool {
        matches!(self, Ranked::Judged(judgment) if judgment.relevant)
    }

    /// The gain of graded metrics (0 for an unjudged document).
    pub fn gain(self) -> Grade {
        match self {
            Ranked::Judged(judgment) => judgment.gain(),
            Ranked::Unjudged => 0,
        }
    }

    /// Whether the qrels assess the document: judged with a grade of 0 or more. A negative
    /// grade is trec_eval's "pooled but not judged" (`-1`), so it is no assessment either: bpref
    /// skips it, judged@k and RBP's residual count it as unjudged, as trec_eval's `bpref`, `unj`
    /// and `rbp_resid` do.
    pub fn is_assessed(self) -> bool {
        matches!(self, Ranked::Judged(judgment) if judgment.grade >= 0)
    }
}

impl Judgment {
    /// A judgment from a grade alone: relevant when the grade is at least 1.
    pub fn from_grade(grade: Grade) -> Self {
        Judgment {
            grade,
            relevant: grade >= 1,
        }
    }

    /// The judgment at relevance level `level`: relevant only with a grade at least `level`
    /// (the grade, the gain of graded metrics, stays).
    pub fn at_level(self, level: Grade) -> Self {
        Judgment {
            relevant: self.relevant && self.grade >= level,
            ..self
        }
    }

    /// The gain this judgment contributes to graded metrics: negative grades count as 0.
    pub fn gain(self) -> Grade {
        self.grade.max(0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    start: usize,
    end: usize,
    judgment: Judgment,
}

/// A doc that one query's judgments list twice ([`Judgments::seal`]); the reader reports it with
/// the query and the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("doc `{doc}` is judged twice")]
pub struct JudgedTwice {
    /// The doc id.
    pub doc: String,
}

/// Judgments of one query. Build with `push`, then `seal` once before any `get`.
#[derive(Debug, Clone, Default)]
pub struct Judgments {
    ids: String,
    entries: Vec<Entry>,
    /// The position in `entries` of each id, by the id's hash: built by `seal`. Its control
    /// bytes answer most lookups of an unjudged id without comparing any id.
    index: HashTable<u32>,
    sealed: bool,
}

/// Equal when they judge the same documents the same way (the index follows from the entries).
impl PartialEq for Judgments {
    fn eq(&self, other: &Self) -> bool {
        self.sealed == other.sealed && self.iter().eq(other.iter())
    }
}

impl Eq for Judgments {}

/// The hash of a doc id in the index: of its bytes, so that a run's doc id is looked up without
/// checking it is UTF-8 first (an id that is not cannot equal a judged one), and a caller that
/// also hashes the ids for its own table hashes each once ([`Judgments::get_hashed`]).
pub fn id_hash(doc_id: &[u8]) -> u64 {
    FxBuildHasher.hash_one(doc_id)
}

impl Judgments {
    /// Adds a judgment; duplicates are found by `seal`.
    pub fn push(&mut self, doc_id: &str, judgment: Judgment) {
        let start = self.ids.len();
        self.ids.push_str(doc_id);
        self.entries.push(Entry {
            start,
            end: self.ids.len(),
            judgment,
        });
        self.sealed = false;
    }

    fn id(&self, entry: &Entry) -> &str {
        &self.ids[entry.start..entry.end]
    }

    /// Sorts the entries by doc id and indexes them; fails with a doc id judged twice, if any.
    pub fn seal(&mut self) -> Result<(), JudgedTwice> {
        let mut entries = std::mem::take(&mut self.entries);
        entries.sort_unstable_by(|a, b| self.id(a).cmp(self.id(b)));
        let duplicate = entries
            .windows(2)
            .find(|pair| self.id(&pair[0]) == self.id(&pair[1]))
            .map(|pair| self.id(&pair[0]).to_string());
        self.entries = entries;
        self.entries.shrink_to_fit();
        self.ids.shrink_to_fit();
        self.index = self.index();
        self.sealed = true;
        duplicate.map_or(Ok(()), |doc| Err(JudgedTwice { doc }))
    }

    fn index(&self) -> HashTable<u32> {
        let position =
            |index: usize| u32::try_from(index).expect("at most 2^32 judgments for one query");
        let mut table = HashTable::with_capacity(self.entries.len());
        for (index, entry) in self.entries.iter().enumerate() {
            table.insert_unique(
                id_hash(self.id(entry).as_bytes()),
                position(index),
                |&other| id_hash(self.id(&self.entries[other as usize]).as_bytes()),
            );
        }
        table
    }

    /// The judgment of `doc_id`, if the qrels judge it.
    pub fn get(&self, doc_id: &str) -> Option<Judgment> {
        self.get_bytes(doc_id.as_bytes())
    }

    /// [`Judgments::get`] of a doc id as a run holds it, in bytes: bytes that are not UTF-8 are no
    /// judged id (the qrels' ids are text), so they need no check first.
    pub fn get_bytes(&self, doc_id: &[u8]) -> Option<Judgment> {
        self.get_hashed(id_hash(doc_id), doc_id)
    }

    /// [`Judgments::get`] of a doc id given as bytes, whose [`id_hash`] the caller computed.
    pub fn get_hashed(&self, hash: u64, doc_id: &[u8]) -> Option<Judgment> {
        // Always checked (debug assertions are off in every profile, see Cargo.toml): unsealed,
        // the index is empty and every lookup would silently say "not judged".
        assert!(self.sealed, "seal() before get()");
        self.index
            .find(hash, |&index| {
                self.id(&self.entries[index as usize]).as_bytes() == doc_id
            })
            .map(|&index| self.entries[index as usize].judgment)
    }

    /// (doc id, judgment) pairs, in doc id order once sealed.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Judgment)> {
        self.entries
            .iter()
            .map(|entry| (self.id(entry), entry.judgment))
    }

    /// Makes every judgment relevant only with a grade at least `level` ([`Judgment::at_level`]).
    pub fn set_relevance_level(&mut self, level: Grade) {
        for entry in &mut self.entries {
            entry.judgment = entry.judgment.at_level(level);
        }
    }

    /// How many documents are judged.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no document is judged.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unjudged_is_neither_relevant_nor_gain_nor_assessed() {
        let unjudged = Ranked::of(None);
        assert_eq!(unjudged, Ranked::Unjudged);
        assert!(!unjudged.relevant() && !unjudged.is_assessed());
        assert_eq!(unjudged.gain(), 0);
        for grade in crate::input::qrels::GRADES {
            let judged = Ranked::of(Some(Judgment::from_grade(grade)));
            assert_eq!(judged.relevant(), grade >= 1);
            assert_eq!(judged.is_assessed(), grade >= 0);
            assert_eq!(judged.gain(), grade.max(0));
        }
    }

    #[test]
    fn lookup_after_seal_and_duplicates_reported() {
        let mut judgments = Judgments::default();
        for (doc, grade) in [("d10", 1), ("d2", 0), ("d1", 3)] {
            judgments.push(doc, Judgment::from_grade(grade));
        }
        assert_eq!(judgments.seal(), Ok(()));
        assert_eq!(judgments.get("d1"), Some(Judgment::from_grade(3)));
        assert_eq!(judgments.get("d2"), Some(Judgment::from_grade(0)));
        assert_eq!(judgments.get("d3"), None);
        // By bytes with the caller's hash, as a run's doc ids are looked up; bytes that are not
        // UTF-8 are no judged id.
        assert_eq!(
            judgments.get_hashed(id_hash(b"d10"), b"d10"),
            Some(Judgment::from_grade(1))
        );
        assert_eq!(judgments.get_bytes(b"d2"), Some(Judgment::from_grade(0)));
        assert_eq!(judgments.get_bytes(b"d1\xff"), None);
        let ids: Vec<&str> = judgments.iter().map(|(id, _)| id).collect();
        assert_eq!(ids, ["d1", "d10", "d2"]);
        judgments.push("d10", Judgment::from_grade(2));
        assert_eq!(
            judgments.seal(),
            Err(JudgedTwice {
                doc: "d10".to_string()
            })
        );
    }

    #[test]
    fn the_index_finds_every_judged_id_and_no_other() {
        let mut judgments = Judgments::default();
        let mut expected = std::collections::BTreeMap::new();
        for n in 0..1000 {
            let doc = format!("doc-{}", n * 7);
            let judgment = Judgment::from_grade(n % 4 - 1);
            judgments.push(&doc, judgment);
            expected.insert(doc, judgment);
        }
        assert_eq!(judgments.seal(), Ok(()));
        for n in 0..7000 {
            let doc = format!("doc-{n}");
            assert_eq!(judgments.get(&doc), expected.get(&doc).copied(), "{doc}");
        }
        assert_eq!(judgments.get(""), None);
        let mut empty = Judgments::default();
        assert_eq!(empty.seal(), Ok(()));
        assert_eq!(empty.get("doc-0"), None);
    }
}
