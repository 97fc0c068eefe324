//! What `ragate synth` keeps of the generator's drafts: the checks that need no judge (content
//! words, lexical overlap with the gold documents and the `literal` / `paraphrased` label it
//! decides, a number of the answer stated by the document for `numeric`, near-duplicates of
//! earlier drafts or of the tier's queries); the judge's answerability check is applied by the
//! caller on what survives.

use std::collections::BTreeSet;

use crate::judge::draft::QuestionClass;
use crate::judge::lexical2::text;

/// Two questions whose content-word sets have a Jaccard similarity at least this are duplicates.
pub(super) const DUPLICATE_JACCARD: f64 = 0.8;

/// Why a draft is not kept.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Dropped {
    /// The question has no content word (only stop words or punctuation).
    NoContentWords,
    /// The question or the answer is longer than its limit.
    TooLong {
        field: &'static str,
        chars: usize,
        limit: usize,
    },
    /// A `numeric` draft whose answer states no number of its document.
    NoNumberFromDocument,
    /// Near-duplicate of an earlier draft or of one of the tier's queries.
    Duplicate { of: String, jaccard: f64 },
    /// The judge did not find every claim of the answer supported by the gold document(s).
    Unsupported { claims: usize, supported: usize },
}

impl Dropped {
    /// The reason, as the review sheet gives it.
    pub(super) fn reason(&self) -> String {
        match self {
            Dropped::NoContentWords => "the question has no content word".to_string(),
            Dropped::TooLong {
                field,
                chars,
                limit,
            } => format!("{field} of {chars} characters, above {limit}"),
            Dropped::NoNumberFromDocument => {
                "numeric: no number of the answer is stated by the document".to_string()
            }
            Dropped::Duplicate { of, jaccard } => {
                format!("near-duplicate of {of} (word overlap {jaccard:.2})")
            }
            Dropped::Unsupported { claims, supported } => format!(
                "not answerable from its document(s): the judge supports {supported} of the answer's {claims} claim(s)"
            ),
        }
    }

    /// A short key for the summary's counts.
    pub(super) fn key(&self) -> &'static str {
        match self {
            Dropped::NoContentWords => "no content word",
            Dropped::TooLong { .. } => "too long",
            Dropped::NoNumberFromDocument => "numeric without a number",
            Dropped::Duplicate { .. } => "duplicate",
            Dropped::Unsupported { .. } => "not answerable",
        }
    }
}

/// The share of `question`'s content tokens that occur in `document`'s tokens (None: the
/// question has none).
pub(super) fn overlap(question: &BTreeSet<String>, document: &BTreeSet<String>) -> Option<f64> {
    if question.is_empty() {
        return None;
    }
    let shared = question.intersection(document).count();
    Some(shared as f64 / question.len() as f64)
}

/// The class a draft is labelled with: `literal` and `paraphrased` by the measured overlap
/// (`literal` from `literal_overlap` on), the others as asked.
pub(super) fn label(asked: QuestionClass, overlap: f64, literal_overlap: f64) -> QuestionClass {
    match asked {
        QuestionClass::Literal | QuestionClass::Paraphrased if overlap >= literal_overlap => {
            QuestionClass::Literal
        }
        QuestionClass::Literal | QuestionClass::Paraphrased => QuestionClass::Paraphrased,
        other => other,
    }
}

/// Whether some number the answer states (a weak one such as "one" left out) is stated by the
/// document too, compared as normalised values (`10,000` = `10000`).
pub(super) fn states_a_number_of(answer: &str, document: &str) -> bool {
    let stated: BTreeSet<String> = text::analyse(document, None)
        .quantities
        .into_iter()
        .map(|q| q.value)
        .collect();
    text::analyse(answer, None)
        .quantities
        .iter()
        .any(|q| !q.weak && stated.contains(&q.value))
}

/// Jaccard similarity of two token sets (0 when both are empty).
pub(super) fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// The most similar of `known` (name, tokens) to `question`, when it is a near-duplicate.
pub(super) fn duplicate_of(
    question: &BTreeSet<String>,
    known: &[(String, BTreeSet<String>)],
) -> Option<Dropped> {
    known
        .iter()
        .map(|(name, tokens)| (name, jaccard(question, tokens)))
        .filter(|&(_, similarity)| similarity >= DUPLICATE_JACCARD)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(name, similarity)| Dropped::Duplicate {
            of: name.clone(),
            jaccard: similarity,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::lexical::LexicalJudge;

    fn tokens(text: &str) -> BTreeSet<String> {
        LexicalJudge::default().tokens(text)
    }

    #[test]
    fn overlap_labels_literal_and_paraphrased_questions() {
        let document =
            tokens("Invoices are kept for ten years in the archive, then deleted by the archiver.");
        let literal = overlap(&tokens("are invoices kept in the archive"), &document);
        let most = overlap(
            &tokens("how long are invoices kept in the archive"),
            &document,
        );
        let paraphrased = overlap(&tokens("what is the retention period for bills"), &document);
        assert_eq!(literal, Some(1.0));
        assert_eq!(most, Some(0.75), "`long` is not in the document");
        assert_eq!(paraphrased, Some(0.0));
        assert_eq!(overlap(&tokens("how is it"), &document), None);
        for asked in [QuestionClass::Literal, QuestionClass::Paraphrased] {
            assert_eq!(label(asked, 1.0, 0.7), QuestionClass::Literal);
            assert_eq!(label(asked, 0.69, 0.7), QuestionClass::Paraphrased);
        }
        assert_eq!(
            label(QuestionClass::Numeric, 1.0, 0.7),
            QuestionClass::Numeric
        );
        assert_eq!(
            label(QuestionClass::MultiTopic, 0.0, 0.7),
            QuestionClass::MultiTopic
        );
    }

    #[test]
    fn a_numeric_answer_needs_a_number_the_document_states() {
        let document = "A multipart upload may have up to 10,000 parts of at most 5 GiB.";
        assert!(states_a_number_of("Up to 10000 parts.", document));
        assert!(states_a_number_of("At most 5 GiB per part.", document));
        assert!(!states_a_number_of("Up to 20,000 parts.", document));
        assert!(!states_a_number_of("Many parts.", document));
    }

    #[test]
    fn near_duplicates_are_found_and_named() {
        let known = vec![
            (
                "synth-0001".to_string(),
                tokens("how long are invoices kept"),
            ),
            ("r007".to_string(), tokens("where are backups stored")),
        ];
        match duplicate_of(&tokens("How long are the invoices kept?"), &known) {
            Some(Dropped::Duplicate { of, jaccard }) => {
                assert_eq!(of, "synth-0001");
                assert_eq!(jaccard, 1.0);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            duplicate_of(&tokens("how long are backups stored"), &known),
            None
        );
        assert_eq!(jaccard(&BTreeSet::new(), &BTreeSet::new()), 0.0);
    }
}
