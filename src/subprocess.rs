//! A child process spoken to in JSON lines: argv (never a shell), stdin written by one thread while
//! stdout is read by another (so large batches cannot deadlock), its stderr handed line by line to
//! the caller as it comes (the caller prints it, sanitised) and its end kept for errors
//! ([`StderrTail`]), a deadline over the whole run, and the child killed when the caller gives up.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::stderr_tail::StderrTail;

/// What the next read of the child's output gave.
#[derive(Debug)]
pub(crate) enum Next {
    Line(String),
    /// The child closed its stdout.
    End,
    /// The deadline passed first.
    TimedOut,
    ReadFailed(std::io::Error),
}

/// A running child with its input being written in the background.
pub(crate) struct LineProcess {
    child: Child,
    writer: Option<JoinHandle<()>>,
    lines: mpsc::Receiver<std::io::Result<String>>,
    written_at: Arc<Mutex<Vec<Instant>>>,
    /// Signals once the child's stderr is read to its end.
    stderr_done: mpsc::Receiver<()>,
    deadline: Instant,
    stderr_tail: StderrTail,
}

/// The longest stderr line handed on, in bytes; the rest of a longer one is dropped and the line
/// marked as cut.
pub(crate) const MAX_STDERR_LINE: usize = 4096;

/// How long [`LineProcess::wait`] waits, once the child has exited, for the rest of its stderr
/// (a grandchild that inherited the pipe may keep it open: its lines are still handed on later).
const STDERR_DRAIN: Duration = Duration::from_secs(1);

impl LineProcess {
    /// Starts `argv` in `dir` (the current directory when `None`) and writes `input` (each entry
    /// one line, newline included) to its stdin, which is closed afterwards. Each line the child
    /// writes to stderr goes to `stderr` as soon as it is complete (without its line ending,
    /// invalid UTF-8 replaced, at most [`MAX_STDERR_LINE`] bytes), from a thread of its own; its
    /// end is kept too ([`LineProcess::stderr_tail`]).
    pub(crate) fn start(
        argv: &[String],
        dir: Option<&Path>,
        input: Vec<String>,
        timeout: Duration,
        stderr: impl FnMut(&str) + Send + 'static,
    ) -> std::io::Result<Self> {
        let (program, args) = argv.split_first().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "empty command")
        })?;
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn()?;
        let deadline = Instant::now() + timeout;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let child_stderr = child.stderr.take().expect("stderr is piped");
        let (done_tx, stderr_done) = mpsc::channel();
        let stderr_tail = StderrTail::default();
        let tail = stderr_tail.clone();
        let mut stderr = stderr;
        std::thread::spawn(move || {
            forward_lines(child_stderr, |line| {
                tail.push_line(line);
                stderr(line);
            });
            tail.close();
            let _ = done_tx.send(());
        });
        let written_at = Arc::new(Mutex::new(Vec::with_capacity(input.len())));
        let written = Arc::clone(&written_at);
        let writer = std::thread::spawn(move || {
            for line in &input {
                // A failed write means the child exited early; its exit status tells why.
                if stdin
                    .write_all(line.as_bytes())
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    break;
                }
                written.lock().expect("writer lock").push(Instant::now());
            }
        });
        let (lines_tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(LineProcess {
            child,
            writer: Some(writer),
            lines,
            written_at,
            stderr_done,
            deadline,
            stderr_tail,
        })
    }

    /// The end of the child's stderr, readable after the process is consumed (killed, waited).
    pub(crate) fn stderr_tail(&self) -> StderrTail {
        self.stderr_tail.clone()
    }

    /// The next output line, waiting at most until the deadline.
    pub(crate) fn next(&self) -> Next {
        let wait = self.deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(Ok(line)) => Next::Line(line),
            Ok(Err(e)) => Next::ReadFailed(e),
            Err(mpsc::RecvTimeoutError::Timeout) => Next::TimedOut,
            Err(mpsc::RecvTimeoutError::Disconnected) => Next::End,
        }
    }

    /// When input line `index` had been written to the child's stdin, if it has been.
    pub(crate) fn written_at(&self, index: usize) -> Option<Instant> {
        self.written_at
            .lock()
            .expect("writer lock")
            .get(index)
            .copied()
    }

    /// Kills the child (the caller gave up on it) and reaps it.
    pub(crate) fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }

    /// The child's exit status once it exits, waiting at most `grace` (and not past the
    /// deadline); `None` when it is still running then (it is killed).
    pub(crate) fn exit_status_within(mut self, grace: Duration) -> Option<ExitStatus> {
        self.deadline = self.deadline.min(Instant::now() + grace);
        self.wait().ok().flatten()
    }

    /// Waits for the child to exit, until the deadline; `None` when it did not (it is killed).
    pub(crate) fn wait(mut self) -> std::io::Result<Option<ExitStatus>> {
        loop {
            if let Some(status) = self.child.try_wait()? {
                if let Some(writer) = self.writer.take() {
                    let _ = writer.join();
                }
                // Its last stderr lines before whatever the caller prints next.
                let _ = self.stderr_done.recv_timeout(STDERR_DRAIN);
                return Ok(Some(status));
            }
            if Instant::now() >= self.deadline {
                self.kill();
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Hands each line of `reader` to `sink` as soon as it is complete: without its `\n` or `\r\n`,
/// invalid UTF-8 replaced, cut to [`MAX_STDERR_LINE`] bytes (`... (cut)`); a last line without a
/// line feed too. Stops at the end or at a read error.
fn forward_lines(reader: impl Read, mut sink: impl FnMut(&str)) {
    let mut reader = BufReader::new(reader);
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    let mut emit = |line: &mut Vec<u8>, cut: &mut bool| {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let text = String::from_utf8_lossy(line);
        if *cut {
            sink(&format!("{text}... (cut)"));
        } else {
            sink(&text);
        }
        line.clear();
        *cut = false;
    };
    loop {
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if buffer.is_empty() {
            if !line.is_empty() || cut {
                emit(&mut line, &mut cut);
            }
            break;
        }
        let newline = memchr::memchr(b'\n', buffer);
        let chunk = &buffer[..newline.unwrap_or(buffer.len())];
        let room = MAX_STDERR_LINE.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        cut |= chunk.len() > room;
        let used = newline.map_or(buffer.len(), |at| at + 1);
        reader.consume(used);
        if newline.is_some() {
            emit(&mut line, &mut cut);
        }
    }
}

/// How a child ended, for messages: `exited with code 3`, `was killed by signal 9 (SIGKILL)`.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                1 => " (SIGHUP)",
                2 => " (SIGINT)",
                6 => " (SIGABRT)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                13 => " (SIGPIPE)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("it was killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("it exited with code {code}"),
        None => format!("it ended with {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn echoes_a_large_input_without_deadlock() {
        // 20,000 lines of ~100 bytes: far more than a pipe buffer in both directions.
        let input: Vec<String> = (0..20_000).map(|i| format!("{i:0>100}\n")).collect();
        let process =
            LineProcess::start(&sh("cat"), None, input, Duration::from_secs(30), |_| {}).unwrap();
        let mut count = 0;
        loop {
            match process.next() {
                Next::Line(line) => {
                    assert_eq!(line, format!("{count:0>100}"));
                    count += 1;
                }
                Next::End => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(count, 20_000);
        assert!(process.written_at(19_999).is_some());
        assert!(process.wait().unwrap().unwrap().success());
    }

    #[test]
    fn a_hanging_child_times_out_and_is_killed() {
        let process = LineProcess::start(
            &sh("sleep 30"),
            None,
            vec!["x\n".into()],
            Duration::from_millis(200),
            |_| {},
        )
        .unwrap();
        let started = Instant::now();
        assert!(matches!(process.next(), Next::TimedOut));
        assert!(process.wait().unwrap().is_none());
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn reports_the_exit_status_and_runs_in_the_given_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker"), "here").unwrap();
        let process = LineProcess::start(
            &sh("cat marker; exit 3"),
            Some(dir.path()),
            Vec::new(),
            Duration::from_secs(10),
            |_| {},
        )
        .unwrap();
        assert!(matches!(process.next(), Next::Line(line) if line == "here"));
        assert!(matches!(process.next(), Next::End));
        assert_eq!(process.wait().unwrap().unwrap().code(), Some(3));
    }

    #[test]
    fn an_empty_or_missing_program_is_an_error() {
        let start = |argv: &[String]| {
            LineProcess::start(argv, None, Vec::new(), Duration::from_secs(1), |_| {})
        };
        assert!(start(&[]).is_err());
        assert!(start(&["/nonexistent/ragate-test-program".to_string()]).is_err());
    }

    #[test]
    fn stderr_lines_reach_the_sink_before_wait_returns() {
        let (tx, rx) = mpsc::channel();
        let script = "printf 'Compiling x\\r\\n\\033[31mred\\n' >&2; echo out; printf 'last' >&2";
        let process = LineProcess::start(
            &sh(script),
            None,
            Vec::new(),
            Duration::from_secs(30),
            move |line| tx.send(line.to_string()).unwrap(),
        )
        .unwrap();
        assert!(matches!(process.next(), Next::Line(line) if line == "out"));
        assert!(process.wait().unwrap().unwrap().success());
        // Raw here: the printer sanitises (term::child_line).
        let lines: Vec<String> = rx.try_iter().collect();
        assert_eq!(lines, ["Compiling x", "\u{1b}[31mred", "last"]);
    }

    #[test]
    fn long_stderr_lines_are_cut_and_bad_utf8_replaced() {
        let mut long = vec![b'a'; MAX_STDERR_LINE + 10];
        long.extend_from_slice(b"\nok \xff\nend");
        let mut lines = Vec::new();
        forward_lines(&long[..], |line| lines.push(line.to_string()));
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(
            lines[0],
            format!("{}... (cut)", "a".repeat(MAX_STDERR_LINE))
        );
        assert_eq!(lines[1], "ok \u{fffd}");
        assert_eq!(lines[2], "end");
    }
}
