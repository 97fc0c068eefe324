//! `lexical-2`'s unit tests with `Prepared2` standing for `Prepared3`: the contradictions,
//! numbers, names and windows that `lexical-2` catches, `lexical-3` catches too.

pub(super) use crate::judge::lexical2::window_share;
pub(super) use crate::judge::lexical3::Prepared3 as Prepared2;
pub(super) use crate::metrics::claims::split_claims;

// The same file as `lexical2::tests`, on purpose: its cases run once per version.
#[allow(clippy::duplicate_mod)]
#[path = "../lexical2/tests.rs"]
mod cases;
