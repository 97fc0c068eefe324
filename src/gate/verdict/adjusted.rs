//! How a check's multiplicity correction is shown: its adjusted p-value (Holm's step-down adjusted
//! p, Benjamini-Hochberg's q) against its family's alpha, the comparison that decides it, so the
//! numbers a report prints always agree with the verdict.

use crate::format::{p_against, p_text};
use crate::gate::verdict::Family;
use crate::stats::holm::Procedure;

/// The level of each family of metric checks, set in one place (`gate::decision`): alpha each by
/// default, a share of it under `alpha_scope: run`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FamilyLevels {
    /// The `all` checks.
    pub primary: f64,
    /// The slice checks.
    pub slices: f64,
}

impl FamilyLevels {
    /// Every family at `alpha`.
    pub fn uniform(alpha: f64) -> FamilyLevels {
        FamilyLevels {
            primary: alpha,
            slices: alpha,
        }
    }

    /// The level of `family` (the primary one's for families that are not metric checks).
    pub fn of(&self, family: Family) -> f64 {
        match family {
            Family::Slices => self.slices,
            Family::Primary | Family::Calibration | Family::Drift | Family::MustPass => {
                self.primary
            }
        }
    }
}

/// A tested check's place in its family's correction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adjustment {
    /// The family's correction.
    pub procedure: Procedure,
    /// How many tested checks the family corrects over.
    pub checks: usize,
    /// The family's level (alpha, or its share under `alpha_scope: run`).
    pub alpha: f64,
    /// The check's adjusted p-value: it is rejected exactly when this is at most `alpha`.
    pub adjusted: f64,
}

/// How the comparison is written: ASCII in verdicts and JUnit, symbols in the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notation {
    /// `<=`, `alpha`.
    Ascii,
    /// `≤`, `α`.
    Symbols,
}

impl Adjustment {
    /// Whether the family's correction rejects the check.
    pub fn rejected(&self) -> bool {
        self.adjusted <= self.alpha
    }

    /// The correction's name in gate.json: `holm`, `bh` or `none`.
    pub fn procedure_name(&self) -> &'static str {
        match self.procedure {
            Procedure::Holm => "holm",
            Procedure::BenjaminiHochberg => "bh",
            Procedure::None => "none",
        }
    }

    /// `Holm-adjusted p = 0.0123 over 5 checks <= alpha 0.0500`, `BH-adjusted q = 0.0300 over 12
    /// checks > alpha 0.0500`, `p = 0.0123 (no correction) <= alpha 0.0500`, or for a family of
    /// one check `p = 0.0123 <= alpha 0.0500`.
    pub fn describe(&self, notation: Notation) -> String {
        // Equal values need no extra digits to be told apart.
        let (p, alpha) = if self.adjusted == self.alpha {
            (p_text(self.adjusted), format!("{:.4}", self.alpha))
        } else {
            p_against(self.adjusted, self.alpha)
        };
        let (at_most, alpha_word) = match notation {
            Notation::Ascii => ("<=", "alpha"),
            Notation::Symbols => ("≤", "α"),
        };
        let relation = if self.rejected() { at_most } else { ">" };
        let compared = format!("{relation} {alpha_word} {alpha}");
        match (self.procedure, self.checks) {
            (Procedure::None, _) => format!("{p} (no correction) {compared}"),
            (_, 0 | 1) => format!("{p} {compared}"),
            (Procedure::Holm, m) => format!("Holm-adjusted {p} over {m} checks {compared}"),
            (Procedure::BenjaminiHochberg, m) => {
                let q = p.replacen("p ", "q ", 1);
                format!("BH-adjusted {q} over {m} checks {compared}")
            }
        }
    }

    /// Whether the adjusted value differs from the raw p (so the raw one is worth showing too).
    pub fn adjusts(&self) -> bool {
        self.procedure != Procedure::None && self.checks > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adjustment(procedure: Procedure, checks: usize, adjusted: f64) -> Adjustment {
        Adjustment {
            procedure,
            checks,
            alpha: 0.05,
            adjusted,
        }
    }

    #[test]
    fn the_adjusted_value_is_shown_against_alpha() {
        assert_eq!(
            adjustment(Procedure::Holm, 5, 0.0123).describe(Notation::Ascii),
            "Holm-adjusted p = 0.0123 over 5 checks <= alpha 0.0500"
        );
        assert_eq!(
            adjustment(Procedure::Holm, 5, 0.06).describe(Notation::Symbols),
            "Holm-adjusted p = 0.0600 over 5 checks > α 0.0500"
        );
        assert_eq!(
            adjustment(Procedure::BenjaminiHochberg, 12, 0.03).describe(Notation::Ascii),
            "BH-adjusted q = 0.0300 over 12 checks <= alpha 0.0500"
        );
        assert_eq!(
            adjustment(Procedure::BenjaminiHochberg, 12, 0.00001).describe(Notation::Ascii),
            "BH-adjusted q < 0.0001 over 12 checks <= alpha 0.0500"
        );
        assert_eq!(
            adjustment(Procedure::None, 3, 0.2).describe(Notation::Ascii),
            "p = 0.2000 (no correction) > alpha 0.0500"
        );
        assert_eq!(
            adjustment(Procedure::Holm, 1, 0.05).describe(Notation::Ascii),
            "p = 0.0500 <= alpha 0.0500"
        );
        // Values that round alike are printed apart, and the relation is the decision's.
        let close = adjustment(Procedure::Holm, 2, 0.050004);
        assert!(!close.rejected());
        assert_eq!(
            close.describe(Notation::Ascii),
            "Holm-adjusted p = 5.0004e-2 over 2 checks > alpha 5.0000e-2"
        );
    }
}
