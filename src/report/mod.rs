//! Renderers of results for people and machines; they only format, never decide.

pub(crate) mod annotations;
pub mod eval_output;
pub mod gate_json;
pub mod gate_table;
pub mod junit;
pub(crate) mod measured;
pub mod operational;
// summary.rs is being reworked on another branch; its `render` gets its doc line there (then
// this allowance goes).
#[allow(missing_docs)]
pub mod summary;
