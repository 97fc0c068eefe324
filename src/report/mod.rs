//! Renderers of results for people and machines; they only format, never decide.

pub mod eval_output;
