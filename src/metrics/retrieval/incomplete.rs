//! The retrieval metrics that read incomplete judgments as such: `bpref` (unjudged documents
//! skipped), `rbp@p` with its residual `rbp_residual@p` (what the unjudged documents could still
//! add), and `judged@k` (how much of the top k the qrels assess). trec_eval 10.0's `bpref`,
//! `rbp`, `rbp_resid` and `unj` (see docs/metrics.md for where ragate differs).

use std::fmt;

use crate::input::qrels::Ranked;
use crate::metrics::retrieval::QueryTruth;

/// RBP's persistence p, the chance that a reader goes on to the next rank: strictly between 0
/// and 1, written with at most four decimals (`0.8`, `0.95`). Kept in ten-thousandths, so that
/// the metric is a plain value (compared, hashed) and its name reads back as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Persistence(u16);

/// Ten-thousandths in one.
const SCALE: u16 = 10_000;

impl Persistence {
    /// trec_eval's default, `rbp` and `rbp_resid` (p = 0.9).
    pub const TREC_EVAL: Persistence = Persistence(9_000);
    /// ir_measures' default, `RBP` (p = 0.8).
    pub const IR_MEASURES: Persistence = Persistence(8_000);

    /// p as a number.
    pub fn value(self) -> f64 {
        f64::from(self.0) / f64::from(SCALE)
    }

    /// The persistence written `0.` and one to four digits, not all 0; None otherwise.
    pub fn parse(text: &str) -> Option<Self> {
        let digits = text.strip_prefix("0.")?;
        if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let padded = format!("{digits:0<4}");
        let ten_thousandths: u16 = padded.parse().ok()?;
        (ten_thousandths > 0).then_some(Persistence(ten_thousandths))
    }
}

impl fmt::Display for Persistence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = format!("{:04}", self.0);
        write!(f, "0.{}", digits.trim_end_matches('0'))
    }
}

/// trec_eval's bpref: for each relevant document retrieved, one less the share of the judged
/// non-relevant documents ranked above it (at most R of them count, out of min(R, N)), summed and
/// divided by R. Unjudged documents, and those of a negative grade (pooled but not judged), are
/// skipped; they are not taken for non-relevant ones.
pub(super) fn bpref(ranking: &[Ranked], truth: &QueryTruth) -> f64 {
    if truth.num_relevant == 0 {
        return 0.0;
    }
    let relevant = truth.num_relevant;
    let mut non_relevant_above = 0usize;
    let mut sum = 0.0;
    for &ranked in ranking {
        if ranked.relevant() {
            sum += if non_relevant_above == 0 {
                1.0
            } else {
                let counted = non_relevant_above.min(relevant) as f64;
                1.0 - counted / truth.num_non_relevant.min(relevant) as f64
            };
        } else if ranked.is_assessed() {
            non_relevant_above += 1;
        }
    }
    sum / relevant as f64
}

/// Rank-biased precision: (1 - p) times the sum of p^(rank - 1) over the relevant documents
/// retrieved (binary gain: a relevant document gains 1).
pub(super) fn rbp(ranking: &[Ranked], persistence: Persistence) -> f64 {
    let p = persistence.value();
    let mut weight = 1.0;
    let mut sum = 0.0;
    for &ranked in ranking {
        if ranked.relevant() {
            sum += weight;
        }
        weight *= p;
    }
    (1.0 - p) * sum
}

/// RBP's residual: how much RBP could still grow if every unassessed document retrieved were
/// relevant, and every document below the ranking too: (1 - p) times the sum of p^(rank - 1) over
/// the unassessed documents, plus p^n for a ranking of n documents. RBP lies in
/// [rbp, rbp + residual] whatever the missing judgments say.
pub(super) fn rbp_residual(ranking: &[Ranked], persistence: Persistence) -> f64 {
    let p = persistence.value();
    let mut weight = 1.0;
    let mut sum = 0.0;
    for &ranked in ranking {
        if !ranked.is_assessed() {
            sum += weight;
        }
        weight *= p;
    }
    (1.0 - p) * sum + weight
}

/// The share of the top k retrieved docs that the qrels assess (a grade of 0 or more), out of
/// the docs retrieved when fewer than k were (ir_measures' `Judged@k`); 0 when none was.
/// trec_eval's `unj_k` is the share left unjudged out of k: judged@k = 1 - unj_k when at least k
/// docs were retrieved.
pub(super) fn judged(ranking: &[Ranked], k: usize) -> f64 {
    let top = &ranking[..k.min(ranking.len())];
    if top.is_empty() {
        return 0.0;
    }
    let assessed = top.iter().filter(|ranked| ranked.is_assessed()).count();
    assessed as f64 / top.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::qrels::Judgment;

    const R: Ranked = Ranked::Judged(Judgment {
        grade: 1,
        relevant: true,
    });
    const N: Ranked = Ranked::Judged(Judgment {
        grade: 0,
        relevant: false,
    });
    const POOLED: Ranked = Ranked::Judged(Judgment {
        grade: -1,
        relevant: false,
    });
    const U: Ranked = Ranked::Unjudged;

    fn truth(num_relevant: usize, num_non_relevant: usize) -> QueryTruth {
        QueryTruth {
            num_relevant,
            num_non_relevant,
            ideal_gains: vec![1; num_relevant],
        }
    }

    #[test]
    fn persistence_reads_four_decimals_and_writes_them_back_without_trailing_zeros() {
        for (text, shown) in [
            ("0.8", "0.8"),
            ("0.95", "0.95"),
            ("0.9000", "0.9"),
            ("0.0001", "0.0001"),
        ] {
            let p = Persistence::parse(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(p.to_string(), shown);
        }
        assert_eq!(Persistence::parse("0.8").unwrap().value(), 0.8);
        for bad in [
            "0", "1", "0.", "0.0", "0.00000", "0.12345", "1.0", ".8", "0.8x", "0,8", "-0.5",
        ] {
            assert_eq!(Persistence::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn bpref_skips_unjudged_and_pooled_documents_but_counts_judged_non_relevant_ones() {
        // R = 2, N = 3: the first relevant doc has no judged non-relevant doc above it (the
        // unjudged and pooled ones are skipped), the second has one of min(2, 3).
        let ranking = [U, POOLED, R, N, U, R, N];
        let value = bpref(&ranking, &truth(2, 3));
        assert!(
            (value - (1.0 + (1.0 - 1.0 / 2.0)) / 2.0).abs() < 1e-15,
            "{value}"
        );
        // Were the unjudged docs scored as judged non-relevant, the first relevant doc would lose.
        let conflated = [N, N, R, N, N, R, N];
        assert!(bpref(&conflated, &truth(2, 3)) < value);
        assert_eq!(bpref(&[N, N], &truth(0, 2)), 0.0);
    }

    #[test]
    fn rbp_and_its_residual_bound_every_completion_of_the_judgments() {
        let p = Persistence::parse("0.5").unwrap();
        let ranking = [R, U, N, POOLED];
        assert_eq!(rbp(&ranking, p), 0.5);
        // unassessed ranks 2 and 4: 0.5 * (0.5 + 0.125), plus 0.5^4 below the ranking
        assert_eq!(rbp_residual(&ranking, p), 0.5 * 0.625 + 0.0625);
        let best = [R, R, N, R];
        assert_eq!(
            rbp(&best, p) + 0.0625,
            rbp(&ranking, p) + rbp_residual(&ranking, p)
        );
        assert_eq!(rbp_residual(&[], p), 1.0);
    }

    #[test]
    fn judged_at_k_reads_the_top_k_or_what_was_retrieved_of_it() {
        assert_eq!(judged(&[R, U, N, POOLED, U], 4), 0.5);
        assert_eq!(judged(&[R, U], 4), 0.5);
        assert_eq!(judged(&[U, R, N], 1), 0.0);
        assert_eq!(judged(&[], 10), 0.0);
    }
}
