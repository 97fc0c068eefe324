//! The test set's upkeep: judgment holes and their proposed grades ([`holes`]), drafted queries
//! ([`synth`]), reviewed proposals and drafts written into the qrels ([`qrels_apply`],
//! [`qrels_accept`]), and the lint of model judgments no person reviewed ([`model_judgments`]).

pub(crate) mod holes;
pub(crate) mod model_judgments;
pub(crate) mod qrels_accept;
pub(crate) mod qrels_apply;
pub(crate) mod synth;
