//! stdout: what a command was asked to print (documents, tables, scripts), once, and whether it
//! printed anything (an error after a document prints no second one).

use std::path::Path;

use crate::error::{Error, Result};
use crate::term;

/// Whether the command printed something on stdout: a failure after its document (a run
/// without a baseline prints one, then exits 2) prints no second, error document.
static STDOUT_WRITTEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Prints what a command was asked to produce for machines (tsv, completions), also under
/// `--quiet`: text for a terminal (secrets redacted, then `escape::terminal`).
pub(crate) fn write_stdout(text: &str) -> Result<()> {
    print_stdout(text, term::Stdout::Terminal)
}

/// Prints a JSON or JSON Lines document (`--format json`), also under `--quiet`, as it is: its
/// encoder (`json_text`) redacted and escaped it already, and the terminal's guard would break it.
pub(crate) fn write_document(text: &str) -> Result<()> {
    print_stdout(text, term::Stdout::Document)
}

fn print_stdout(text: &str, kind: term::Stdout) -> Result<()> {
    if !text.is_empty() {
        STDOUT_WRITTEN.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(());
    }
    match term::write_stdout(text, kind) {
        // Its reader closed stdout (`ragate eval ... | head`): the output ends there, as a
        // pipe's does, and the command goes on to its own exit status (a gate that fails
        // still exits 1).
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }
        result => result.map_err(|e| Error::write(Path::new("<stdout>"), e)),
    }
}

/// Whether stdout's reader has closed it: nothing more is written there.
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`write_stdout`] printed anything yet.
pub(crate) fn stdout_written() -> bool {
    STDOUT_WRITTEN.load(std::sync::atomic::Ordering::Relaxed)
}

/// Prints a report for people (a table, a summary, lines of findings); nothing under `--quiet`.
pub(crate) fn write_human(text: &str) -> Result<()> {
    if term::quiet() {
        return Ok(());
    }
    write_stdout(text)
}
