//! A family of checks: its correction at its level (Holm, Benjamini-Hochberg or none, over the
//! checks that can reach it), then each member's verdict.

use super::*;

/// The family's correction at its level `alpha`, then each member's verdict.
pub(super) fn decide_family(
    members: &[&Candidate],
    family: Family,
    alpha: f64,
    checks: &[Check<'_>],
    settings: &GateSettings,
    tier: &str,
    outcomes: &mut [CheckOutcome],
) {
    let procedure = procedure(family, settings);
    // Bonferroni level of one check in this family: the threshold of the family's smallest p, so
    // a check that cannot reach it can never fail on its own evidence.
    let tested = members.iter().filter(|c| c.limit.is_some()).count().max(1);
    let lone_level = match procedure {
        Procedure::None => alpha,
        Procedure::Holm | Procedure::BenjaminiHochberg => alpha / tested as f64,
    };
    let (powered, underpowered): (Vec<&&Candidate>, Vec<&&Candidate>) = members
        .iter()
        .partition(|c| c.test.is_none_or(|t| t.smallest_p <= lone_level));
    let p_values: Vec<f64> = powered
        .iter()
        .filter_map(|c| c.test.map(|t| t.p_value))
        .collect();
    let mut steps = procedure.apply(&p_values, alpha).into_iter();
    let family_checks = p_values.len();
    let context = |index: usize| Context {
        check: &checks[index],
        settings,
        tier,
        alpha,
        tested,
        lone_level,
    };
    for candidate in powered {
        let step = candidate.test.and_then(|_| steps.next());
        let adjustment = step.map(|s| Adjustment {
            procedure,
            checks: family_checks,
            alpha,
            adjusted: s.adjusted,
        });
        outcomes[candidate.index] =
            context(candidate.index).decide_check(candidate, step, adjustment);
    }
    for candidate in underpowered {
        outcomes[candidate.index] = context(candidate.index).underpowered(candidate);
    }
}

fn procedure(family: Family, settings: &GateSettings) -> Procedure {
    match family {
        Family::Slices => match settings.slice_correction {
            SliceCorrection::Holm => Procedure::Holm,
            SliceCorrection::Bh => Procedure::BenjaminiHochberg,
            SliceCorrection::None => Procedure::None,
        },
        Family::Primary | Family::Calibration | Family::Drift | Family::MustPass => {
            match settings.correction {
                Correction::Holm => Procedure::Holm,
                Correction::None => Procedure::None,
            }
        }
    }
}
