//! The run's verdict as every output states it: one word, one mark and one exit code, derived
//! from the decided run in this one place, so that report.html, summary.md, junit.xml, the JSON
//! document, the terminal and the PR comment cannot disagree (a run that passes with
//! inconclusive checks is "inconclusive" everywhere, never "pass").

use serde::Serialize;

use crate::baseline::results::RunStatus;
use crate::exit_code;
use crate::gate::GateReport;
use crate::gate::verdict::CheckStatus;

/// What a gated run concluded, as people read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunVerdict {
    /// Every check passed (or was skipped as underpowered); none is inconclusive.
    Pass,
    /// No check failed, but at least one is beyond its limit without the evidence to decide it;
    /// the run passes (`inconclusive: pass`, the default) and says so.
    Inconclusive,
    /// At least one check failed (or, with `inconclusive: fail`, was not proven): exit 1.
    Regression,
    /// Something could not be evaluated: exit 2, never a pass.
    Error,
    /// A first run: nothing was gated, no baseline to compare with yet (exit 2).
    NoBaseline,
}

impl RunVerdict {
    /// The verdict of a decided run.
    pub fn of(report: &GateReport) -> Self {
        let inconclusive = report
            .outcomes
            .iter()
            .any(|o| o.status == CheckStatus::Inconclusive);
        match report.status {
            RunStatus::Pass if inconclusive => RunVerdict::Inconclusive,
            RunStatus::Pass => RunVerdict::Pass,
            RunStatus::Regression => RunVerdict::Regression,
            RunStatus::Error => RunVerdict::Error,
            RunStatus::NoBaseline => RunVerdict::NoBaseline,
        }
    }

    /// The verdict in one word (lower case; the HTML badge shows it in capitals).
    pub fn word(self) -> &'static str {
        match self {
            RunVerdict::Pass => "pass",
            RunVerdict::Inconclusive => "inconclusive",
            RunVerdict::Regression => "regression",
            RunVerdict::Error => "error",
            RunVerdict::NoBaseline => "no baseline",
        }
    }

    /// The mark that opens the summary's headline.
    pub fn mark(self) -> &'static str {
        match self {
            RunVerdict::Pass => "✅",
            RunVerdict::Inconclusive => "❓",
            RunVerdict::Regression => "❌",
            RunVerdict::Error | RunVerdict::NoBaseline => "⚠️",
        }
    }

    /// The process's exit code for this verdict (0, 1 or 2).
    pub fn exit_code(self) -> i32 {
        match self {
            RunVerdict::Pass | RunVerdict::Inconclusive => exit_code::SUCCESS,
            RunVerdict::Regression => exit_code::REGRESSION,
            RunVerdict::Error | RunVerdict::NoBaseline => exit_code::ERROR,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::InconclusivePolicy;
    use crate::gate::verdict::{CheckOutcome, Family};

    fn report(status: RunStatus, checks: &[CheckStatus]) -> GateReport {
        let mut report = GateReport::without_checks("smoke", status, InconclusivePolicy::Pass);
        report.outcomes = checks
            .iter()
            .map(|&status| {
                let mut o = CheckOutcome::bare(
                    "recall@5 [all]".into(),
                    "recall@5".into(),
                    "all".into(),
                    Family::Primary,
                );
                o.status = status;
                o
            })
            .collect();
        report
    }

    #[test]
    fn a_passing_run_with_an_inconclusive_check_is_inconclusive_and_exits_0() {
        let cases = [
            (
                RunStatus::Pass,
                vec![CheckStatus::Pass],
                RunVerdict::Pass,
                0,
            ),
            (
                RunStatus::Pass,
                vec![CheckStatus::Pass, CheckStatus::Inconclusive],
                RunVerdict::Inconclusive,
                0,
            ),
            (
                RunStatus::Regression,
                vec![CheckStatus::Fail, CheckStatus::Inconclusive],
                RunVerdict::Regression,
                1,
            ),
            (
                RunStatus::Error,
                vec![CheckStatus::Error],
                RunVerdict::Error,
                2,
            ),
            (RunStatus::NoBaseline, vec![], RunVerdict::NoBaseline, 2),
        ];
        for (status, checks, verdict, code) in cases {
            let report = report(status, &checks);
            assert_eq!(RunVerdict::of(&report), verdict, "{status:?} {checks:?}");
            assert_eq!(verdict.exit_code(), code);
            assert_eq!(report.exit_code(), code);
        }
        assert_eq!(RunVerdict::Inconclusive.word(), "inconclusive");
        assert_eq!(RunVerdict::Inconclusive.mark(), "❓");
    }
}
