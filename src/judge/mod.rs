//! Judges: verdicts on whether claims are supported by contexts and answers address questions.

pub mod lexical;
