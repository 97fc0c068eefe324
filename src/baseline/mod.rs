//! Results and baselines: their file format, how they are built, stored and accepted.

pub mod collect;
pub mod embeddings;
pub mod results;
pub mod store;
