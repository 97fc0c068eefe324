//! Renderers of results for people and machines; they only format, never decide.

pub(crate) mod annotations;
pub(crate) mod answer_diff;
pub(crate) use crate::columns;
pub(crate) mod error_summary;
pub mod eval_output;
pub(crate) use crate::format;
pub mod gate_json;
pub mod gate_table;
pub(crate) mod html;
pub(crate) mod inert;
pub mod junit;
pub(crate) mod measured;
pub mod operational;
pub(crate) mod outcome;
pub(crate) mod reported;
pub(crate) mod run_outputs;
pub mod summary;
pub(crate) mod summary_text;
pub mod trec_eval_format;
pub(crate) mod trends_markdown;
