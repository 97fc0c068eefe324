//! A child process spoken to in JSON lines: argv (never a shell), stdin written by one thread while
//! stdout is read by another (so large batches cannot deadlock), its stderr handed line by line to
//! the caller as it comes (the caller prints it, sanitised) and its end kept for errors
//! ([`StderrTail`]), a deadline over the whole run, and the child killed when the caller gives up.
//!
//! The child leads a process group of its own ([`process_group`]): when the caller gives up, at
//! the deadline, and after the child exited, whatever is left of the group (descendants the
//! child started) gets SIGTERM, then SIGKILL after [`process_group::GRACE`]. A descendant that
//! keeps the child's stdout open does not hide the child's exit: [`STDOUT_AFTER_EXIT`] after it,
//! the output counts as ended.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::process_group;
use crate::stderr_tail::StderrTail;

/// What the next read of the child's output gave.
#[derive(Debug)]
pub(crate) enum Next {
    Line(String),
    /// The child closed its stdout; or it exited and [`STDOUT_AFTER_EXIT`] passed with its stdout
    /// still open (a descendant holds it; what that one writes is not read).
    End,
    /// The deadline passed first, with the child still running.
    TimedOut,
    ReadFailed(std::io::Error),
}

/// A running child with its input being written in the background.
pub(crate) struct LineProcess {
    child: Mutex<Watched>,
    /// The child's process group (its pid).
    group: u32,
    /// Whether the group was ended (it left the registry).
    ended: bool,
    writer: Option<JoinHandle<()>>,
    lines: mpsc::Receiver<std::io::Result<String>>,
    written_at: Arc<Mutex<Vec<Instant>>>,
    /// Signals once the child's stderr is read to its end.
    stderr_done: mpsc::Receiver<()>,
    deadline: Instant,
    stderr_tail: StderrTail,
}

/// The child and when it was first seen to have exited.
struct Watched {
    child: Child,
    exited_at: Option<Instant>,
}

impl Watched {
    /// The child's exit status if it has exited (and reaps it), noting when that was first seen.
    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        if status.is_some() && self.exited_at.is_none() {
            self.exited_at = Some(Instant::now());
        }
        Ok(status)
    }
}

/// The longest stderr line handed on, in bytes; the rest of a longer one is dropped and the line
/// marked as cut.
pub(crate) const MAX_STDERR_LINE: usize = 4096;

/// How long [`LineProcess::wait`] waits, once the child has exited, for the rest of its stderr
/// (a grandchild that inherited the pipe may keep it open: its lines are still handed on later).
const STDERR_DRAIN: Duration = Duration::from_secs(1);

/// How long the child's stdout is still read after the child exited: a descendant that inherited
/// the pipe may keep it open (a server started in the background); after this the output counts
/// as ended ([`Next::End`]) and the child is reported by its exit status.
pub(crate) const STDOUT_AFTER_EXIT: Duration = Duration::from_secs(1);

/// How often [`LineProcess::next`] checks, while waiting for a line, whether the child exited.
const EXIT_POLL: Duration = Duration::from_millis(20);

impl LineProcess {
    /// Starts `argv` in `dir` (the current directory when `None`), in a process group of its own,
    /// and writes `input` (each entry one line, newline included) to its stdin, which is closed
    /// afterwards. Each line the child writes to stderr goes to `stderr` as soon as it is complete
    /// (without its line ending, invalid UTF-8 replaced, at most [`MAX_STDERR_LINE`] bytes), from a
    /// thread of its own; its end is kept too ([`LineProcess::stderr_tail`]).
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
        let mut child = process_group::spawn(&mut command)?;
        let group = child.id();
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
            child: Mutex::new(Watched {
                child,
                exited_at: None,
            }),
            group,
            ended: false,
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

    fn watched(&self) -> MutexGuard<'_, Watched> {
        self.child.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next output line, waiting at most until the deadline, or, once the child has exited,
    /// until [`STDOUT_AFTER_EXIT`] after that (then [`Next::End`], even if a descendant still
    /// holds the pipe). Lines already read are handed out first.
    pub(crate) fn next(&self) -> Next {
        let received = |line: std::io::Result<String>| match line {
            Ok(line) => Next::Line(line),
            Err(e) => Next::ReadFailed(e),
        };
        loop {
            match self.lines.try_recv() {
                Ok(line) => return received(line),
                Err(mpsc::TryRecvError::Disconnected) => return Next::End,
                Err(mpsc::TryRecvError::Empty) => {}
            }
            let exited_at = {
                let mut watched = self.watched();
                // An error here leaves the deadline to end the wait.
                let _ = watched.try_wait();
                watched.exited_at
            };
            let (limit, at_limit) = match exited_at {
                Some(exited) => (exited + STDOUT_AFTER_EXIT, Next::End),
                None => (self.deadline, Next::TimedOut),
            };
            let now = Instant::now();
            if now >= limit {
                return at_limit;
            }
            match self.lines.recv_timeout((limit - now).min(EXIT_POLL)) {
                Ok(line) => return received(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Next::End,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
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

    /// Ends the child and its whole process group (the caller gave up on it: SIGTERM, then
    /// SIGKILL after [`process_group::GRACE`]) and reaps it.
    pub(crate) fn kill(mut self) {
        self.stop();
    }

    /// The child's exit status once it exits, waiting at most `grace` (and not past the
    /// deadline); `None` when it is still running then (it is killed).
    pub(crate) fn exit_status_within(mut self, grace: Duration) -> Option<ExitStatus> {
        self.deadline = self.deadline.min(Instant::now() + grace);
        self.wait().ok().flatten()
    }

    /// Waits for the child to exit, until the deadline; `None` when it did not (it is killed,
    /// with its group). Once it has exited, what is left of its group is ended (no wait when
    /// nothing is).
    pub(crate) fn wait(mut self) -> std::io::Result<Option<ExitStatus>> {
        loop {
            if let Some(status) = self
                .child
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .try_wait()?
            {
                self.end_group();
                self.join_writer();
                // Its last stderr lines before whatever the caller prints next.
                let _ = self.stderr_done.recv_timeout(STDERR_DRAIN);
                return Ok(Some(status));
            }
            if Instant::now() >= self.deadline {
                self.stop();
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Ends what is left of the child's group, once.
    fn end_group(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        let watched = self.child.get_mut().unwrap_or_else(PoisonError::into_inner);
        process_group::end(self.group, || {
            let _ = watched.try_wait();
        });
    }

    /// Ends the group, then kills the child itself too (should it have left its group; and on
    /// systems without process groups), and reaps it.
    fn stop(&mut self) {
        self.end_group();
        let child = &mut self
            .child
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .child;
        let _ = child.kill();
        let _ = child.wait();
        self.join_writer();
    }

    /// Joins the stdin writer if it is done; one still blocked writing to a pipe that a
    /// descendant outside the group holds open is left behind.
    fn join_writer(&mut self) {
        if let Some(writer) = self.writer.take_if(|writer| writer.is_finished()) {
            let _ = writer.join();
        }
    }
}

impl Drop for LineProcess {
    /// A process dropped without [`LineProcess::wait`] or [`LineProcess::kill`] (an early return,
    /// a panic) is killed with its group.
    fn drop(&mut self) {
        if !self.ended {
            self.stop();
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
mod tests;
