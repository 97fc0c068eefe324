//! Metrics: per-query values with documented conventions.

pub mod retrieval;
