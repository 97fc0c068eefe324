//! The terminal: whether to colour stdout and stderr (`--color`, `NO_COLOR`, `FORCE_COLOR`),
//! `--quiet`, and the prefixed messages for people on stderr (`error:`, `warning:`, `note:`).
//!
//! Both writers pass their text through [`crate::escape::terminal`]: no raw control
//! character and no line that starts a workflow command reaches a stream unless ragate wrote it.
//!
//! Colour goes only to a stream that shows it: renderers get a [`Paint`] for the stream they are
//! printed on, and files are rendered with [`Paint::plain`], so summary.md, junit.xml and the JSON
//! documents never hold escape codes.

use std::ffi::OsStr;
use std::fmt::Display;
use std::io::Write;
use std::sync::OnceLock;

use anstream::{AutoStream, ColorChoice};
use anstyle::{AnsiColor, Style};

/// When to colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set (non-empty); also off a terminal when FORCE_COLOR is.
    #[default]
    Auto,
    /// Always, whatever the environment says.
    Always,
    /// Never.
    Never,
}

/// A failing or erroneous check, and the `error:` prefix.
pub(crate) const BAD: Style = AnsiColor::Red.on_default().bold();
/// A passing or improved check.
pub(crate) const GOOD: Style = AnsiColor::Green.on_default();
/// An inconclusive check, and the `warning:` prefix.
pub(crate) const DOUBTFUL: Style = AnsiColor::Yellow.on_default().bold();

/// `--quiet`, once the command line is parsed.
static QUIET: OnceLock<bool> = OnceLock::new();

/// The colour choice `--color` makes with the environment: `always` and `never` decide alone;
/// `auto` is off when `NO_COLOR` is non-empty, else on when `FORCE_COLOR` is non-empty (both as
/// Python 3.13 reads them), else up to each stream (a terminal, `TERM` not `dumb`, `CLICOLOR`).
pub(crate) fn resolve(
    flag: ColorWhen,
    no_color: Option<&OsStr>,
    force_color: Option<&OsStr>,
) -> ColorChoice {
    let set = |value: Option<&OsStr>| value.is_some_and(|v| !v.is_empty());
    match flag {
        ColorWhen::Always => ColorChoice::Always,
        ColorWhen::Never => ColorChoice::Never,
        ColorWhen::Auto if set(no_color) => ColorChoice::Never,
        ColorWhen::Auto if set(force_color) => ColorChoice::Always,
        ColorWhen::Auto => ColorChoice::Auto,
    }
}

/// Applies `NO_COLOR`/`FORCE_COLOR` before the command line is parsed, so that clap's own help
/// and usage errors follow them too.
pub(crate) fn init_from_env() {
    init_color(ColorWhen::Auto);
}

/// Applies `--color` (with the environment) and `--quiet` for the rest of the process.
pub(crate) fn init(color: ColorWhen, quiet: bool) {
    init_color(color);
    let _ = QUIET.set(quiet);
}

fn init_color(flag: ColorWhen) {
    let choice = resolve(
        flag,
        std::env::var_os("NO_COLOR").as_deref(),
        std::env::var_os("FORCE_COLOR").as_deref(),
    );
    choice.write_global();
}

/// Whether `--quiet` asked for errors only.
pub(crate) fn quiet() -> bool {
    QUIET.get().copied().unwrap_or(false)
}

/// Styles text for one stream, or leaves it plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paint {
    enabled: bool,
}

impl Paint {
    /// No colour: for files and anything that is not a terminal stream.
    pub(crate) const fn plain() -> Self {
        Paint { enabled: false }
    }

    /// Colour when stdout shows it.
    pub(crate) fn stdout() -> Self {
        Paint {
            enabled: AutoStream::choice(&std::io::stdout()) != ColorChoice::Never,
        }
    }

    /// Colour when stderr shows it.
    pub(crate) fn stderr() -> Self {
        Paint {
            enabled: AutoStream::choice(&std::io::stderr()) != ColorChoice::Never,
        }
    }

    /// A paint that colours, whatever the streams are.
    #[cfg(test)]
    pub(crate) const fn enabled_for_tests() -> Self {
        Paint { enabled: true }
    }

    /// Whether this paint adds escape codes.
    pub(crate) fn enabled(self) -> bool {
        self.enabled
    }

    /// `text` in `style`, or `text` itself.
    pub(crate) fn paint(self, style: Style, text: &str) -> String {
        if self.enabled {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }
}

/// What is written to stdout, and so how it is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stdout {
    /// Text ragate composed for a terminal (tables, lists, TSV): secrets redacted on the
    /// composed raw text, then made safe by [`crate::escape::terminal`].
    Terminal,
    /// A document its own encoder wrote (JSON by `json_text`, already redacted and escaped):
    /// written as it is.
    Document,
}

/// Writes `text` to stdout (through anstream when it is coloured, so that a Windows console
/// renders the codes).
pub(crate) fn write_stdout(text: &str, kind: Stdout) -> std::io::Result<()> {
    let text = match kind {
        Stdout::Terminal => {
            let raw = crate::secrets::redact(text);
            std::borrow::Cow::Owned(
                crate::escape::terminal(&raw, Paint::stdout().enabled()).into_owned(),
            )
        }
        Stdout::Document => std::borrow::Cow::Borrowed(text),
    };
    let text = &text;
    let stdout = std::io::stdout().lock();
    if Paint::stdout().enabled() {
        AutoStream::always(stdout).write_all(text.as_bytes())
    } else {
        let mut stdout = stdout;
        stdout.write_all(text.as_bytes())
    }
}

/// Writes `text` to stderr (as [`write_stdout`], with what came from a config's `${VAR}` named as
/// written: [`crate::as_written`]); a stderr that cannot be written is ignored, as `eprintln!`
/// would panic on it.
fn write_stderr(text: &str) {
    let text = crate::as_written::conceal(text);
    let text = crate::secrets::redact(&text);
    emit_stderr(&crate::escape::terminal(&text, Paint::stderr().enabled()));
}

/// Writes text already redacted and encoded for the terminal to stderr, as it is.
fn emit_stderr(text: &str) {
    let stderr = std::io::stderr().lock();
    let _ = if Paint::stderr().enabled() {
        AutoStream::always(stderr).write_all(text.as_bytes())
    } else {
        let mut stderr = stderr;
        stderr.write_all(text.as_bytes())
    };
}

/// Where a workflow command goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CommandStream {
    /// stdout (the table format, where the runner reads the job log).
    Stdout,
    /// stderr (when stdout holds a JSON document; the runner reads commands there too).
    Stderr,
}

/// Prints one workflow command that ragate wrote itself (an `::error`/`::warning` annotation
/// whose text `report::annotations` redacted and escaped, its one encoder) on its own line. The
/// only printer that lets a line start with `::`: everything else goes through the writers above,
/// which neutralise such lines. A stream that cannot be written is ignored.
pub(crate) fn workflow_command(line: &str, stream: CommandStream) {
    let _ = match stream {
        CommandStream::Stdout => writeln!(std::io::stdout().lock(), "{line}"),
        CommandStream::Stderr => writeln!(std::io::stderr().lock(), "{line}"),
    };
}

/// `error: MESSAGE` and its `caused by:` lines on stderr (the causes the message does not
/// already tell), also under `--quiet`.
pub(crate) fn error(error: &dyn std::error::Error) {
    let message = crate::error::with_causes(error, "\n  caused by: ");
    write_stderr(&format!(
        "{} {message}\n",
        Paint::stderr().paint(BAD, "error:")
    ));
}

/// `error: MESSAGE` on stderr, also under `--quiet` (a finding that is not a Rust error).
pub(crate) fn error_message(message: impl Display) {
    write_stderr(&format!(
        "{} {message}\n",
        Paint::stderr().paint(BAD, "error:")
    ));
}

/// `warning: MESSAGE` on stderr, unless `--quiet`.
pub(crate) fn warning(message: impl Display) {
    if !quiet() {
        write_stderr(&format!(
            "{} {message}\n",
            Paint::stderr().paint(DOUBTFUL, "warning:")
        ));
    }
}

/// `note: MESSAGE` on stderr, unless `--quiet`.
pub(crate) fn note(message: impl Display) {
    if !quiet() {
        write_stderr(&format!("note: {message}\n"));
    }
}

/// A line of progress or of what was done (`ragate convert: 12 queries written ...`) on stderr,
/// unless `--quiet`.
pub(crate) fn info(message: impl Display) {
    if !quiet() {
        write_stderr(&format!("{message}\n"));
    }
}

/// One line a child program (the pipeline, a judge program) wrote to its stderr, on stderr as
/// `LABEL: LINE`, also under `--quiet` (it is the program's own diagnostics). Untrusted text: every
/// control character is shown escaped, the child's colour codes included, and no line of it
/// starts a workflow command.
pub(crate) fn child_line(label: &str, line: &str) {
    emit_stderr(&child_text(label, line));
}

/// The child's line redacted, then encoded once for the terminal with colour off: not even a
/// colour code of the child's stays raw.
fn child_text(label: &str, line: &str) -> String {
    let raw = crate::secrets::redact(line);
    crate::escape::terminal(&format!("{label}: {raw}\n"), false).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_overrides_the_environment_and_no_color_beats_force_color() {
        let on = Some(OsStr::new("1"));
        let empty = Some(OsStr::new(""));
        assert_eq!(resolve(ColorWhen::Auto, None, None), ColorChoice::Auto);
        assert_eq!(resolve(ColorWhen::Auto, on, None), ColorChoice::Never);
        assert_eq!(resolve(ColorWhen::Auto, None, on), ColorChoice::Always);
        assert_eq!(resolve(ColorWhen::Auto, on, on), ColorChoice::Never);
        // An empty value is not set.
        assert_eq!(resolve(ColorWhen::Auto, empty, None), ColorChoice::Auto);
        assert_eq!(resolve(ColorWhen::Auto, empty, on), ColorChoice::Always);
        assert_eq!(resolve(ColorWhen::Auto, None, empty), ColorChoice::Auto);
        assert_eq!(resolve(ColorWhen::Always, on, None), ColorChoice::Always);
        assert_eq!(resolve(ColorWhen::Never, None, on), ColorChoice::Never);
    }

    #[test]
    fn plain_paint_adds_nothing_and_enabled_paint_wraps_in_escape_codes() {
        assert_eq!(Paint::plain().paint(BAD, "FAIL"), "FAIL");
        let painted = Paint { enabled: true }.paint(BAD, "FAIL");
        assert_eq!(painted, "\u{1b}[1m\u{1b}[31mFAIL\u{1b}[0m");
    }

    #[test]
    fn child_lines_are_labelled_and_inert() {
        assert_eq!(
            child_text("pipeline", "   Compiling ragate-example-pipeline v0.1.0"),
            "pipeline:    Compiling ragate-example-pipeline v0.1.0\n"
        );
        // The child's colour, a screen clear and a bell are shown escaped.
        assert_eq!(
            child_text("pipeline", "\u{1b}[31mred\u{1b}[0m\u{1b}[2J\u{7}"),
            "pipeline: \\u{1b}[31mred\\u{1b}[0m\\u{1b}[2J\\u{7}\n"
        );
        assert_eq!(
            child_text("judge `ext`", "##[error]x"),
            "judge `ext`: #\\#[error]x\n"
        );
    }
}
