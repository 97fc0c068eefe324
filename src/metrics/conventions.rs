//! The judging conventions of retrieval metrics: the relevance level (trec_eval `-l`: a document
//! is relevant with a grade at least that) and what a judged query without a relevant document
//! scores (`no_relevant`: left out of the means, or 0 in every retrieval metric as trec_eval does).

use serde::{Deserialize, Serialize};

use crate::input::qrels::{GRADES, Grade};

/// The relevance level of trec_eval and of ragate by default: any positive grade is relevant.
pub const DEFAULT_RELEVANCE_LEVEL: Grade = 1;

/// What a judged query without a relevant document scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoRelevant {
    /// Left out of every mean and counted (ragate's default).
    #[default]
    Exclude,
    /// Kept in the means, scoring 0 in every retrieval metric (trec_eval's averages).
    Zero,
}

impl NoRelevant {
    /// The name the config and the command line use.
    pub fn name(self) -> &'static str {
        match self {
            NoRelevant::Exclude => "exclude",
            NoRelevant::Zero => "zero",
        }
    }
}

/// The conventions an evaluation was made with; results made with other ones are not comparable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conventions {
    /// A document is relevant for binary metrics with a grade at least this (nDCG keeps gains).
    pub relevance_level: Grade,
    /// What a judged query without a relevant document scores.
    pub no_relevant: NoRelevant,
}

impl Default for Conventions {
    fn default() -> Self {
        Conventions {
            relevance_level: DEFAULT_RELEVANCE_LEVEL,
            no_relevant: NoRelevant::Exclude,
        }
    }
}

impl Conventions {
    /// What differs from `other`, each as "relevance_level 1 (the baseline) vs 2 (these
    /// results)", naming `self` and `other` as told.
    pub fn differences(&self, other: &Conventions, names: [&str; 2]) -> Vec<String> {
        let [this, that] = names;
        let mut differences = Vec::new();
        if self.relevance_level != other.relevance_level {
            differences.push(format!(
                "relevance_level {} ({this}) vs {} ({that})",
                self.relevance_level, other.relevance_level
            ));
        }
        if self.no_relevant != other.no_relevant {
            differences.push(format!(
                "no_relevant {} ({this}) vs {} ({that})",
                self.no_relevant.name(),
                other.no_relevant.name()
            ));
        }
        differences
    }
}

/// `text` as a relevance level: an integer from 1 to the highest grade (100), else a message
/// saying so.
pub fn relevance_level(value: i64) -> Result<Grade, String> {
    Grade::try_from(value)
        .ok()
        .filter(|level| (DEFAULT_RELEVANCE_LEVEL..=*GRADES.end()).contains(level))
        .ok_or_else(|| {
            format!(
                "{value}: expected an integer grade from {DEFAULT_RELEVANCE_LEVEL} to {} (a \
                 document is relevant with a grade at least this)",
                GRADES.end()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevance_levels_are_positive_grades() {
        assert_eq!(relevance_level(1), Ok(1));
        assert_eq!(relevance_level(100), Ok(100));
        for bad in [0, -1, 101, i64::MAX] {
            let message = relevance_level(bad).unwrap_err();
            assert!(
                message.ends_with("expected an integer grade from 1 to 100 (a document is relevant with a grade at least this)"),
                "{message}"
            );
        }
    }

    #[test]
    fn differences_name_both_sides() {
        let default = Conventions::default();
        assert!(default.differences(&default, ["a", "b"]).is_empty());
        let other = Conventions {
            relevance_level: 2,
            no_relevant: NoRelevant::Zero,
        };
        assert_eq!(
            default.differences(&other, ["the baseline", "these results"]),
            [
                "relevance_level 1 (the baseline) vs 2 (these results)",
                "no_relevant exclude (the baseline) vs zero (these results)"
            ]
        );
    }
}
