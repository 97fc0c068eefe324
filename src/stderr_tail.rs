//! The end of a child's stderr (the pipeline's, a command judge's), kept while its lines are
//! forwarded to the terminal, so that an error can show the child's own last words (bounded, secrets
//! redacted) where the reason often is: a Python traceback, a missing module, a refused key.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most lines of a tail.
pub(crate) const TAIL_LINES: usize = 20;
/// Most bytes of stderr a tail is read from (the last ones).
pub(crate) const TAIL_BYTES: usize = 4096;
/// How long [`StderrTail::lines`] waits for the child's stderr to close (a grandchild may keep it
/// open: then the lines so far are taken).
const CLOSE_WAIT: Duration = Duration::from_millis(500);

#[derive(Debug, Default)]
struct State {
    /// The last bytes written, at most `2 * TAIL_BYTES` (cut back to `TAIL_BYTES` when over).
    bytes: Vec<u8>,
    /// Whether bytes before `bytes` were dropped.
    cut: bool,
    /// Whether the stream closed.
    closed: bool,
}

impl State {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > 2 * TAIL_BYTES {
            let drop = self.bytes.len() - TAIL_BYTES;
            self.bytes.drain(..drop);
            self.cut = true;
        }
    }
}

/// A handle on the end of a child's stderr (cheap to clone).
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<State>>);

impl StderrTail {
    /// Keeps one line of the child's stderr (without its line ending).
    pub(crate) fn push_line(&self, line: &str) {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        state.push(line.as_bytes());
        state.push(b"\n");
    }

    /// Marks the stream closed: [`StderrTail::lines`] no longer waits.
    pub(crate) fn close(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
    }

    /// The tail as it stands: waits up to half a second for the stream to close, then returns its
    /// last [`TAIL_LINES`] non-empty lines from at most its last [`TAIL_BYTES`] bytes (see
    /// [`tail_lines`]).
    pub(crate) fn lines(&self) -> Vec<String> {
        let deadline = Instant::now() + CLOSE_WAIT;
        loop {
            {
                let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
                if state.closed || Instant::now() >= deadline {
                    let keep = state.bytes.len().min(TAIL_BYTES);
                    let cut = state.cut || keep < state.bytes.len();
                    return tail_lines(&state.bytes[state.bytes.len() - keep..], cut);
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// The last [`TAIL_LINES`] non-empty lines of `bytes` (lossy UTF-8), secrets redacted. Of a first
/// line cut by the byte bound (`cut`) the first word is dropped, `…` in its place (a secret cut in
/// two would not be recognised), the whole line when it has one word; of a line rewritten with
/// carriage returns (a progress bar) only what a terminal would show last is kept. The lines are
/// raw text still: callers make them inert for their output.
pub(crate) fn tail_lines(bytes: &[u8], cut: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    let text = crate::secrets::redact(&text).into_owned();
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    if cut && !lines.is_empty() {
        match lines[0].split_once(char::is_whitespace) {
            Some((_, rest)) if !rest.trim().is_empty() => lines[0] = format!("…{rest}"),
            _ => {
                lines.remove(0);
            }
        }
    }
    let kept: Vec<String> = lines
        .iter()
        .map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            line.rsplit('\r')
                .next()
                .unwrap_or(line)
                .trim_end()
                .to_string()
        })
        .filter(|line| !line.trim().is_empty())
        .collect();
    let skip = kept.len().saturating_sub(TAIL_LINES);
    kept[skip..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_and_what_a_terminal_shows_of_a_progress_bar() {
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let lines = tail_lines(
            format!("{text}\n\n 10%\r 50%\r100% done\r\n").as_bytes(),
            false,
        );
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "line 12");
        assert_eq!(lines[TAIL_LINES - 2], "line 30");
        assert_eq!(lines[TAIL_LINES - 1], "100% done");
    }

    #[test]
    fn a_line_cut_by_the_byte_bound_loses_its_first_word() {
        assert_eq!(
            tail_lines(b"abcdef-partial\nwhole line\n", true),
            ["whole line"]
        );
        assert_eq!(
            tail_lines(b"cdef0123 rest of a long line", true),
            ["…rest of a long line"]
        );
        assert_eq!(tail_lines(b"first\nsecond", false), ["first", "second"]);
    }

    #[test]
    fn the_state_keeps_only_the_last_bytes() {
        let mut state = State::default();
        for _ in 0..100 {
            state.push(&[b'x'; 1000]);
        }
        assert!(state.bytes.len() <= 2 * TAIL_BYTES);
        assert!(state.bytes.len() >= TAIL_BYTES);
        assert!(state.cut);
    }

    #[test]
    fn a_child_s_stderr_is_kept_after_it_exits() {
        let process = crate::subprocess::LineProcess::start(
            &[
                "sh".into(),
                "-c".into(),
                "echo one >&2; echo two >&2; exit 3".into(),
            ],
            None,
            Vec::new(),
            Duration::from_secs(60),
            |_| {},
        )
        .unwrap();
        let tail = process.stderr_tail();
        assert_eq!(process.wait().unwrap().unwrap().code(), Some(3));
        assert_eq!(tail.lines(), ["one", "two"]);
    }
}
