//! Metrics: per-query values with documented conventions.

pub mod aliases;
pub mod answer;
pub mod claims;
pub mod conventions;
pub mod embedding_relevance;
pub mod generation;
pub mod labelled;
pub mod metric;
pub mod retrieval;
pub mod written;
