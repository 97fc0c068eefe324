//! ragate: a CI regression gate for retrieval-augmented generation (RAG) systems.

pub mod app;
pub mod baseline;
pub mod cli;
pub mod config;
pub mod digest;
pub mod error;
pub mod evaluate;
pub mod exit_code;
pub mod gate;
pub mod http;
pub mod input;
pub mod judge;
pub mod metrics;
pub mod pipeline;
pub mod progress;
#[cfg(test)]
mod reader_fuzz;
pub mod report;
pub mod shard;
pub mod stats;
pub mod subprocess;
pub mod suggest;
pub mod tier;
