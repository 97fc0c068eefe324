//! The relevance judgments of a query set, whatever format they were read from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::input::judgments::Judgments;
pub use crate::input::judgments::{Grade, JudgedTwice, Judgment, Ranked};

/// The grades every qrels reader accepts. nDCG's exponential gain 2^g - 1 is finite and exact
/// enough far beyond the top (2^100 ~ 1.3e30), while a grade of 1024 would overflow f64 into
/// inf / inf = NaN; real collections grade 0..=4. Negative grades keep their meaning (neither
/// relevant nor gain) down to the symmetric bound.
pub const GRADES: std::ops::RangeInclusive<Grade> = -100..=100;

/// `grade` when it lies in [`GRADES`], else the message "... expected an integer grade in -100..=100".
pub fn bounded_grade(grade: i64, doc: &str) -> Result<Grade, String> {
    Grade::try_from(grade)
        .ok()
        .filter(|g| GRADES.contains(g))
        .ok_or_else(|| {
            format!(
                "grade {grade} of doc `{}` is out of range: expected an integer grade in {}..={} \
                 (relevance levels; negative grades mean judged non-relevant)",
                crate::error::shorten(doc),
                GRADES.start(),
                GRADES.end()
            )
        })
}

/// One query of the qrels with its judgments and metadata.
#[derive(Debug, Clone, Default)]
pub struct QueryQrels {
    /// The query's id.
    pub qid: String,
    /// The query text, when the format carries one (or a queries file gave it).
    pub text: Option<String>,
    /// The graded judgments of the query's documents.
    pub judgments: Judgments,
    /// Slice attributes such as `class: paraphrased`, in key order.
    pub attributes: BTreeMap<String, String>,
    /// A text a good answer contains (metric `answer_contains`).
    pub gold_answer_substring: Option<String>,
    /// A reference answer (metrics `answer_f1`, `answer_exact`).
    pub reference_answer: Option<String>,
    /// The query must pass on its own (native qrels `"must_pass": true`): the gate decides it
    /// alone, with no statistics (`gate::must_pass`).
    pub must_pass: bool,
    /// The model judgments among `judgments`, by doc id, with who proposed them (native qrels'
    /// `judged_by`); every other judgment is a human one.
    pub judged_by: BTreeMap<String, crate::input::judged_by::ModelJudgment>,
    /// Who drafted the query, when a generator did (`ragate synth`; native qrels only).
    pub drafted_by: Option<crate::input::judged_by::DraftedBy>,
}

impl QueryQrels {
    /// A query `qid` with no judgments yet.
    pub fn new(qid: &str) -> Self {
        QueryQrels {
            qid: qid.to_string(),
            ..QueryQrels::default()
        }
    }

    /// How many judged documents count as relevant.
    pub fn num_relevant(&self) -> usize {
        self.judgments.iter().filter(|(_, j)| j.relevant).count()
    }

    /// Positive gains of all judged documents, highest first: the ideal ranking of graded metrics.
    pub fn ideal_gains(&self) -> Vec<Grade> {
        let mut gains: Vec<Grade> = self
            .judgments
            .iter()
            .map(|(_, j)| j.gain())
            .filter(|&g| g > 0)
            .collect();
        gains.sort_unstable_by(|a, b| b.cmp(a));
        gains
    }
}

/// All queries of a qrels source in file order, indexed by qid.
#[derive(Debug, Clone)]
pub struct Qrels {
    path: PathBuf,
    queries: Vec<QueryQrels>,
    index: FxHashMap<Box<str>, usize>,
    comment_lines: usize,
}

impl Qrels {
    /// Empty qrels read from `path` (messages name it).
    pub fn new(path: &Path) -> Self {
        Qrels {
            path: path.to_path_buf(),
            queries: Vec::new(),
            index: FxHashMap::default(),
            comment_lines: 0,
        }
    }

    /// The file (or BEIR folder) the qrels were read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many comment lines (starting with `#`) the reader skipped.
    pub fn comment_lines(&self) -> usize {
        self.comment_lines
    }

    /// Records that the reader skipped `count` comment lines.
    pub fn set_comment_lines(&mut self, count: usize) {
        self.comment_lines = count;
    }

    /// Makes every judgment relevant only with a grade at least `level` (trec_eval `-l`); the
    /// grades, the gains of graded metrics, stay.
    pub fn set_relevance_level(&mut self, level: Grade) {
        for query in &mut self.queries {
            query.judgments.set_relevance_level(level);
        }
    }

    /// The queries, in file order.
    pub fn queries(&self) -> &[QueryQrels] {
        &self.queries
    }

    /// How many queries.
    pub fn len(&self) -> usize {
        self.queries.len()
    }

    /// Whether there is no query.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }

    /// The position of `qid` in file order.
    pub fn position(&self, qid: &str) -> Option<usize> {
        self.index.get(qid).copied()
    }

    /// Adds a new query; the caller has checked that its qid is new.
    pub fn push(&mut self, query: QueryQrels) -> usize {
        let position = self.queries.len();
        self.index.insert(query.qid.as_str().into(), position);
        self.queries.push(query);
        position
    }

    /// The position of query `qid`, created at the end when it is new.
    pub fn entry(&mut self, qid: &str) -> usize {
        match self.position(qid) {
            Some(position) => position,
            None => self.push(QueryQrels::new(qid)),
        }
    }

    /// The query at `position` (as [`Qrels::queries`] orders them), to change it.
    pub fn query_mut(&mut self, position: usize) -> &mut QueryQrels {
        &mut self.queries[position]
    }

    /// The queries at `positions` (in that order), as a new set.
    pub fn select(mut self, positions: &[usize]) -> Qrels {
        let mut queries: Vec<Option<QueryQrels>> = self.queries.drain(..).map(Some).collect();
        let mut selected = Qrels::new(&self.path);
        selected.comment_lines = self.comment_lines;
        for &position in positions {
            if let Some(query) = queries.get_mut(position).and_then(Option::take) {
                selected.push(query);
            }
        }
        selected
    }

    /// Seals every query's judgments for lookup. Fails when no query was read, or with
    /// `Duplicate` (qid, doc id) when a query judges a doc twice.
    pub fn finish(mut self) -> Result<Self, Unfinished> {
        if self.queries.is_empty() {
            return Err(Unfinished::Empty(Error::input(
                &self.path,
                "no queries: expected at least one judged query",
            )));
        }
        for query in &mut self.queries {
            if let Err(JudgedTwice { doc }) = query.judgments.seal() {
                return Err(Unfinished::Duplicate {
                    qid: query.qid.clone(),
                    doc,
                });
            }
        }
        Ok(self)
    }
}

/// Why qrels could not be finished.
#[derive(Debug)]
pub enum Unfinished {
    /// No query has a judgment: the error to report.
    Empty(Error),
    /// A document is judged twice for one query.
    Duplicate {
        /// The query.
        qid: String,
        /// The document judged twice.
        doc: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_grades_are_neither_relevant_nor_gain() {
        let j = Judgment::from_grade(-1);
        assert!(!j.relevant);
        assert_eq!(j.gain(), 0);
        assert!(Judgment::from_grade(1).relevant);
        assert!(!Judgment::from_grade(0).relevant);
    }

    #[test]
    fn ideal_gains_are_positive_and_descending() {
        let mut q = QueryQrels::new("q");
        for (doc, grade) in [("a", 1), ("b", 3), ("c", 0), ("d", -2), ("e", 2)] {
            q.judgments.push(doc, Judgment::from_grade(grade));
        }
        assert_eq!(q.ideal_gains(), vec![3, 2, 1]);
        assert_eq!(q.num_relevant(), 3);
    }

    #[test]
    fn a_relevance_level_keeps_grades_and_gold_below_it_is_not_relevant() {
        let mut judgments = Judgments::default();
        judgments.push("d1", Judgment::from_grade(1));
        judgments.push("d2", Judgment::from_grade(2));
        judgments.push("d3", Judgment::from_grade(-1));
        // gold (native `gold_doc_ids`) with grade 3, and a graded doc left out of the gold
        judgments.push(
            "g",
            Judgment {
                grade: 3,
                relevant: true,
            },
        );
        judgments.push(
            "n",
            Judgment {
                grade: 4,
                relevant: false,
            },
        );
        judgments.seal().unwrap();
        let mut qrels = Qrels::new(Path::new("x"));
        let position = qrels.entry("q");
        qrels.query_mut(position).judgments = judgments;
        let before = qrels.queries()[0].clone();
        qrels.set_relevance_level(1);
        assert_eq!(qrels.queries()[0].judgments, before.judgments);
        qrels.set_relevance_level(2);
        let query = &qrels.queries()[0];
        let relevant: Vec<&str> = query
            .judgments
            .iter()
            .filter(|(_, j)| j.relevant)
            .map(|(d, _)| d)
            .collect();
        assert_eq!(relevant, ["d2", "g"]);
        assert_eq!(query.ideal_gains(), before.ideal_gains());
        assert_eq!(query.judgments.get("d1").unwrap().grade, 1);
    }

    #[test]
    fn entry_keeps_file_order() {
        let mut qrels = Qrels::new(Path::new("x"));
        qrels.entry("b");
        qrels.entry("a");
        qrels.entry("b");
        let qids: Vec<&str> = qrels.queries().iter().map(|q| q.qid.as_str()).collect();
        assert_eq!(qids, ["b", "a"]);
        assert_eq!(qrels.position("a"), Some(1));
    }
}
