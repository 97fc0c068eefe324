//! Error type of the whole crate: every input error names the file, the line and what was expected.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in an input file a problem was found (`path:line` or `path:line:column`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line number.
    pub line: u64,
    /// The 1-based column, when known.
    pub column: Option<u64>,
}

impl Location {
    /// Line `line` of the file at `path`.
    pub fn new(path: &Path, line: u64) -> Self {
        Location {
            path: path.to_path_buf(),
            line,
            column: None,
        }
    }

    /// The same place, at column `column`.
    pub fn with_column(mut self, column: u64) -> Self {
        self.column = Some(column);
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)?;
        if let Some(column) = self.column {
            write!(f, ":{column}")?;
        }
        Ok(())
    }
}

/// The failure behind an error, kept as its [`std::error::Error::source`].
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Every error ragate reports; each names where it happened and ends with what to do next.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or read; `named_by` is the setting that named it.
    #[error("cannot read {}{}", path.display(), named_by.as_deref().map_or(String::new(), |n| format!(" (named by {n})")))]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// The option or config key that named the file, when known.
        named_by: Option<String>,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An output could not be written; `named_by` is the option or setting that named it.
    #[error("cannot write {}{}", path.display(), named_by.as_deref().map_or(String::new(), |n| format!(" (named by {n})")))]
    Write {
        /// The output that could not be written.
        path: PathBuf,
        /// The option or setting that named the output, when known.
        named_by: Option<String>,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// One line of an input file is malformed.
    #[error("{location}: {message}")]
    Parse {
        /// The file and line (and column, when known).
        location: Location,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A file that does not exist (a baseline not accepted yet, say), as opposed to one that
    /// exists but cannot be read or parsed: callers may treat this one as "nothing yet".
    #[error("{}: {message}", path.display())]
    Missing {
        /// The file that does not exist.
        path: PathBuf,
        /// What it should be and how to make it.
        message: String,
    },
    /// A problem with a whole input file (empty, unknown format, nothing matches).
    #[error("{}: {message}", path.display())]
    Input {
        /// The file (or folder).
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// A config value that parses but is not valid, with its key path (`gate.rules[2].metric`)
    /// and, when found in the file, its line and column.
    #[error("{}{}: {key}: {message}", path.display(), line_column.map_or(String::new(), |(line, column)| format!(":{line}:{column}")))]
    Config {
        /// The config file.
        path: PathBuf,
        /// The key path of the value (`gate.rules[2].metric`).
        key: String,
        /// What is wrong and what to do.
        message: String,
        /// The 1-based line and column of the value in the file, when known.
        line_column: Option<(u64, u64)>,
    },
    /// A judge failed (crashed, timed out, answered out of contract).
    #[error("judge `{judge}`: {message}")]
    Judge {
        /// The judge's name in the config.
        judge: String,
        /// What went wrong and what to do (it tells the cause too).
        message: String,
        /// The failure behind it, when there is one (an HTTP request's, say).
        #[source]
        cause: Option<Cause>,
    },
    /// The pipeline under test failed (crashed, timed out, answered out of protocol).
    #[error("pipeline ({adapter}): {message}")]
    Pipeline {
        /// The adapter that failed (`command`, `http`).
        adapter: String,
        /// What went wrong and what to do (it tells the cause too).
        message: String,
        /// The failure behind it, when there is one (an HTTP request's, say).
        #[source]
        cause: Option<Cause>,
    },
    /// A child process (the pipeline, a command judge) failed as `error` says; `stderr` holds the
    /// last lines it wrote on its stderr (bounded, secrets redacted, not yet inert), which the
    /// exit-2 summary shows. Reads as `error`.
    #[error("{error}")]
    Child {
        /// How it failed ([`Error::Pipeline`] or [`Error::Judge`]).
        error: Box<Error>,
        /// The last lines of its stderr.
        stderr: Vec<String>,
    },
    /// Command-line arguments that parse but make no sense (an unknown metric name, say).
    #[error("{0}")]
    Usage(String),
    /// A chart of the HTML report could not be drawn.
    #[error("report chart `{chart}`: {message}")]
    Chart {
        /// The chart's title.
        chart: String,
        /// What the plotting library said.
        message: String,
    },
}

impl Error {
    /// `self` with the last lines of the failed child's stderr (unchanged when there are none).
    pub fn with_stderr(self, stderr: Vec<String>) -> Self {
        if stderr.is_empty() {
            return self;
        }
        Error::Child {
            error: Box::new(self),
            stderr,
        }
    }

    /// The last lines of a failed child's stderr, if the error carries them.
    pub fn stderr_tail(&self) -> &[String] {
        match self {
            Error::Child { stderr, .. } => stderr,
            _ => &[],
        }
    }

    /// The judge `judge` failed as `message` says.
    pub fn judge(judge: &str, message: impl Into<String>) -> Self {
        Error::Judge {
            judge: judge.to_string(),
            message: message.into(),
            cause: None,
        }
    }

    /// The pipeline's `adapter` failed as `message` says.
    pub fn pipeline(adapter: &str, message: impl Into<String>) -> Self {
        Error::Pipeline {
            adapter: adapter.to_string(),
            message: message.into(),
            cause: None,
        }
    }

    /// The same error, caused by `cause` (a judge's or the pipeline's; others are unchanged).
    /// Its message tells the cause already: printers leave out what it told ([`untold_causes`]).
    pub fn caused_by(self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        match self {
            Error::Judge { judge, message, .. } => Error::Judge {
                judge,
                message,
                cause: Some(Box::new(cause)),
            },
            Error::Pipeline {
                adapter, message, ..
            } => Error::Pipeline {
                adapter,
                message,
                cause: Some(Box::new(cause)),
            },
            other => other,
        }
    }

    /// A file that could not be read.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            named_by: None,
            source,
        }
    }

    /// An output that could not be written.
    pub fn write(path: &Path, source: std::io::Error) -> Self {
        Error::Write {
            path: path.to_path_buf(),
            named_by: None,
            source,
        }
    }

    /// Says which option or config key named the file this error failed to read or write.
    pub fn named_by(self, option: &str) -> Self {
        match self {
            Error::Write { path, source, .. } => Error::Write {
                path,
                named_by: Some(option.to_string()),
                source,
            },
            Error::Io { path, source, .. } => Error::Io {
                path,
                named_by: Some(option.to_string()),
                source,
            },
            other => other,
        }
    }

    /// A malformed line `line` (1-based) of the file at `path`.
    pub fn parse(path: &Path, line: u64, message: impl Into<String>) -> Self {
        Error::Parse {
            location: Location::new(path, line),
            message: message.into(),
        }
    }

    /// An invalid config value at `key` (a key path) of the config at `path`.
    pub fn config(path: &Path, key: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config {
            path: path.to_path_buf(),
            key: key.into(),
            message: message.into(),
            line_column: None,
        }
    }

    /// A file that does not exist (yet), as opposed to one that cannot be read.
    pub fn missing(path: &Path, message: impl Into<String>) -> Self {
        Error::Missing {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    /// Whether the error says only that a file does not exist ([`Error::Missing`]).
    pub fn is_missing(&self) -> bool {
        matches!(self, Error::Missing { .. })
    }

    /// A problem with the whole file at `path`.
    pub fn input(path: &Path, message: impl Into<String>) -> Self {
        Error::Input {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// `error`'s message followed by each of its [`untold_causes`], each after `separator` (`": "`
/// on one line; `"\n  caused by: "` as the terminal prints them).
/// What came from a config's `${VAR}` is named as written ([`crate::as_written`]).
pub(crate) fn with_causes(error: &dyn std::error::Error, separator: &str) -> String {
    let mut text = error.to_string();
    for cause in untold_causes(error) {
        text.push_str(separator);
        text.push_str(&cause);
    }
    crate::as_written::conceal(&text)
}

/// The causes of `error` (its `source` chain, outermost first) that the text before them does
/// not already tell: a judge's message quotes its HTTP failure, which is then not repeated.
pub fn untold_causes(error: &dyn std::error::Error) -> Vec<String> {
    let mut told = error.to_string();
    let mut untold = Vec::new();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !told.contains(&text) {
            told.push_str(&text);
            untold.push(text);
        }
        source = cause.source();
    }
    untold
}

/// ragate's results: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The most characters of an echoed value (an id, a line, a hash) that a message shows.
pub const ECHO_CHARS: usize = 200;

/// `text` as echoed in a message: its first [`ECHO_CHARS`] characters, then `…` and its full
/// length when it is longer, so that a huge id or line from an untrusted file or reply cannot
/// bury the message (or fill a log with 30 MB). Every reader's error path echoes ids through it.
pub fn shorten(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(ECHO_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((end, _)) => std::borrow::Cow::Owned(format!(
            "{}… ({} characters)",
            &text[..end],
            text.chars().count()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_told_once() {
        let io = Error::io(
            Path::new("q.jsonl"),
            std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        );
        assert_eq!(untold_causes(&io), ["no such file"]);
        #[derive(Debug, thiserror::Error)]
        #[error("HTTP 500")]
        struct Http;
        let told = Error::judge("j", "request 0: HTTP 500").caused_by(Http);
        assert!(std::error::Error::source(&told).is_some());
        assert!(untold_causes(&told).is_empty());
        let untold = Error::pipeline("http", "request 0 failed").caused_by(Http);
        assert_eq!(untold_causes(&untold), ["HTTP 500"]);
        let unchanged = Error::Usage("x".into()).caused_by(Http);
        assert!(std::error::Error::source(&unchanged).is_none());
    }

    #[test]
    fn shorten_keeps_short_text_and_cuts_long_text_on_a_character_boundary() {
        assert_eq!(shorten("q1"), "q1");
        let exact = "é".repeat(ECHO_CHARS);
        assert_eq!(shorten(&exact), exact);
        let long = "é".repeat(ECHO_CHARS + 1);
        assert_eq!(
            shorten(&long),
            format!(
                "{}… ({} characters)",
                "é".repeat(ECHO_CHARS),
                ECHO_CHARS + 1
            )
        );
    }
}
