//! Results and baselines: their file format, how they are built, stored and accepted.

pub(crate) mod collect;
pub mod embeddings;
pub mod noise;
pub mod noise_share;
pub mod pairing;
pub mod results;
pub(crate) mod store;
