//! What a finished run writes and prints: the registry of outputs ([`output_table`]) and the
//! writer that walks it ([`writer`]), the checks of the output files ([`output_files`],
//! [`output_place`]), the files a person edits ([`hand_edits`]), stdout ([`stdout`]) and the JSON
//! document of an error ([`error_output`]).

pub(crate) mod error_output;
pub(crate) mod hand_edits;
pub(crate) mod output_files;
pub(crate) mod output_place;
pub(crate) mod output_table;
pub(crate) mod stdout;
pub(crate) mod writer;
