//! Process exit codes, in one place: 0 pass, 1 regression, 2 could not evaluate.

/// Every check passed (or there was nothing to gate, as with `ragate eval`).
pub const SUCCESS: i32 = 0;
/// At least one gated metric regressed.
pub const REGRESSION: i32 = 1;
/// Configuration, input or evaluation error: never a pass.
pub const ERROR: i32 = 2;
