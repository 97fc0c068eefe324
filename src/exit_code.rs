//! Process exit codes, in one place: 0 pass, 1 regression, 2 could not evaluate.
//!
//! [`ExitStatus`] is the typed status (modelled on uv's `ExitStatus`), with the one-line meaning
//! of each code that `ragate --help`, the man page and the README state. [`SUCCESS`],
//! [`REGRESSION`] and [`ERROR`] are its codes as integers, for the callers that compare or store
//! them.

use std::fmt;

/// How a ragate command ended, as its process exit code says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ExitStatus {
    /// 0: the gate passed (inconclusive and skipped checks included), or a command that gates
    /// nothing did what it was asked.
    Success = 0,
    /// 1: a gated check regressed (or an inconclusive one under `inconclusive: fail`; for
    /// `judge-eval`, a judge below `--min-balanced-accuracy`).
    Regression = 1,
    /// 2: nothing could be evaluated: a config or input to fix, or a cause outside them (an
    /// endpoint down, a timeout), which is marked retryable. Never a pass.
    Error = 2,
}

impl ExitStatus {
    /// Every status, in the order of their codes.
    pub const ALL: [ExitStatus; 3] = [
        ExitStatus::Success,
        ExitStatus::Regression,
        ExitStatus::Error,
    ];

    /// The exit code (0, 1 or 2).
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The exit code as a byte, as [`std::process::ExitCode`] takes it.
    pub const fn as_u8(self) -> u8 {
        self as u8
    }

    /// The status of exit code `code`, if it is one of ragate's.
    pub const fn from_code(code: i32) -> Option<ExitStatus> {
        match code {
            0 => Some(ExitStatus::Success),
            1 => Some(ExitStatus::Regression),
            2 => Some(ExitStatus::Error),
            _ => None,
        }
    }

    /// What the code means, on one line (`--help`, the man page's EXIT STATUS, the README).
    pub const fn meaning(self) -> &'static str {
        match self {
            ExitStatus::Success => {
                "pass: every gated check passed (inconclusive and skipped checks included), or a \
                 command that gates nothing did what it was asked"
            }
            ExitStatus::Regression => {
                "regression: a gated check failed (or an inconclusive one under `inconclusive: \
                 fail`; for judge-eval, a judge below --min-balanced-accuracy)"
            }
            ExitStatus::Error => {
                "not evaluated: either a config or input to fix (a bad config, a missing baseline \
                 or one of another tier, a check in error, nothing evaluated, a command line that \
                 does not parse) or a cause outside them that a retry may fix (an endpoint down, \
                 a timeout, HTTP 429 or 5xx after every retry), which the --format json error \
                 document marks `\"retryable\": true`; never a pass"
            }
        }
    }
}

impl fmt::Display for ExitStatus {
    /// The code (`2`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(status: ExitStatus) -> Self {
        std::process::ExitCode::from(status.as_u8())
    }
}

impl From<ExitStatus> for i32 {
    fn from(status: ExitStatus) -> Self {
        status.code()
    }
}

/// Every check passed (or there was nothing to gate, as with `ragate eval`):
/// [`ExitStatus::Success`].
pub const SUCCESS: i32 = ExitStatus::Success.code();
/// At least one gated metric regressed: [`ExitStatus::Regression`].
pub const REGRESSION: i32 = ExitStatus::Regression.code();
/// Configuration, input or evaluation error, never a pass: [`ExitStatus::Error`].
pub const ERROR: i32 = ExitStatus::Error.code();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codes_are_0_1_2_and_the_aliases_agree() {
        assert_eq!(
            ExitStatus::ALL.map(ExitStatus::code),
            [SUCCESS, REGRESSION, ERROR]
        );
        assert_eq!([SUCCESS, REGRESSION, ERROR], [0, 1, 2]);
        for status in ExitStatus::ALL {
            assert_eq!(ExitStatus::from_code(status.code()), Some(status));
            assert_eq!(i32::from(status.as_u8()), status.code());
            assert!(!status.meaning().contains('\n'), "one line: {status}");
            assert!(status.meaning().starts_with(match status {
                ExitStatus::Success => "pass: ",
                ExitStatus::Regression => "regression: ",
                ExitStatus::Error => "not evaluated: ",
            }));
        }
        assert_eq!(ExitStatus::from_code(3), None);
        assert_eq!(ExitStatus::from_code(101), None);
    }

    #[test]
    fn exit_2_says_both_of_its_causes_and_the_retryable_mark() {
        let meaning = ExitStatus::Error.meaning();
        for said in [
            "config or input to fix",
            "retry",
            "endpoint down",
            "\"retryable\": true",
        ] {
            assert!(meaning.contains(said), "{said} in {meaning}");
        }
    }
}
