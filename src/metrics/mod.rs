//! Metrics: per-query values with documented conventions.

pub mod answer;
pub mod claims;
pub mod conventions;
pub mod embedding_relevance;
pub mod generation;
pub mod metric;
pub mod retrieval;
