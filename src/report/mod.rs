//! Renderers of results for people and machines; they only format, never decide.

pub mod annotations;
pub mod answer_diff;
pub mod eval_output;
pub mod gate_json;
pub mod gate_table;
pub mod junit;
pub mod measured;
pub mod operational;
pub mod summary;
pub mod summary_text;
