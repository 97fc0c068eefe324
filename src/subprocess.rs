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

    /// `sh -c` of a script that starts a grandchild in the current directory, which ignores
    /// SIGTERM, holds stdout and stderr open and writes its pid to `grandchild.pid`; once that is
    /// there, the script goes on with `then`.
    #[cfg(unix)]
    fn with_grandchild(then: &str) -> Vec<String> {
        sh(&format!(
            "sh -c 'trap \"\" TERM; echo $$ > grandchild.tmp; mv grandchild.tmp grandchild.pid; \
             exec sleep 30' &\n\
             while [ ! -f grandchild.pid ]; do sleep 0.01; done\n\
             {then}"
        ))
    }

    #[cfg(unix)]
    fn grandchild(dir: &Path) -> libc::pid_t {
        let pid = std::fs::read_to_string(dir.join("grandchild.pid")).unwrap();
        pid.trim().parse().unwrap()
    }

    /// Whether process `pid` runs: it exists and is not a zombie (dead, not yet reaped by its
    /// parent: where PID 1 does not reap orphans, as in some containers, they stay).
    #[cfg(unix)]
    fn alive(pid: libc::pid_t) -> bool {
        // SAFETY: signal 0 sends nothing.
        let exists = unsafe { libc::kill(pid, 0) } == 0;
        exists
            && std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                stat.rsplit_once(')')
                    .is_none_or(|(_, rest)| !rest.trim_start().starts_with('Z'))
            })
    }

    /// Kills what a failed test left running.
    #[cfg(unix)]
    struct Reaper(libc::pid_t);

    #[cfg(unix)]
    impl Drop for Reaper {
        fn drop(&mut self) {
            if alive(self.0) {
                // SAFETY: a pid this test's grandchild had, a moment ago.
                unsafe { libc::kill(self.0, libc::SIGKILL) };
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_grandchild_holding_stdout_does_not_hide_the_exit_status() {
        let dir = tempfile::tempdir().unwrap();
        let process = LineProcess::start(
            &with_grandchild("echo answer; exit 3"),
            Some(dir.path()),
            Vec::new(),
            Duration::from_secs(60),
            |_| {},
        )
        .unwrap();
        let group = process.group;
        assert!(process_group::registered(group));
        assert!(matches!(process.next(), Next::Line(line) if line == "answer"));
        let answered = Instant::now();
        let _reaper = Reaper(grandchild(dir.path()));
        assert!(matches!(process.next(), Next::End));
        let status = process.wait().unwrap().unwrap();
        let took = answered.elapsed();
        assert_eq!(status.code(), Some(3));
        // STDOUT_AFTER_EXIT, then the grace between SIGTERM and SIGKILL, and some slack.
        assert!(took < Duration::from_millis(2500), "{took:?}");
        assert!(!alive(grandchild(dir.path())), "the grandchild is gone");
        assert!(!process_group::registered(group));
    }

    #[cfg(unix)]
    #[test]
    fn lines_read_before_the_exit_are_all_handed_out_however_late_they_are_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let process = LineProcess::start(
            &with_grandchild("seq 5000"),
            Some(dir.path()),
            Vec::new(),
            Duration::from_secs(60),
            |_| {},
        )
        .unwrap();
        std::thread::sleep(STDOUT_AFTER_EXIT + Duration::from_millis(500));
        let _reaper = Reaper(grandchild(dir.path()));
        for expected in 1..=5000 {
            assert!(matches!(process.next(), Next::Line(line) if line == expected.to_string()));
        }
        assert!(matches!(process.next(), Next::End));
        assert!(process.wait().unwrap().unwrap().success());
        assert!(!alive(grandchild(dir.path())));
    }

    #[cfg(unix)]
    #[test]
    fn a_grandchild_ignoring_sigterm_is_gone_after_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let process = LineProcess::start(
            &with_grandchild("trap '' TERM; echo ready; sleep 30"),
            Some(dir.path()),
            Vec::new(),
            Duration::from_secs(3),
            |_| {},
        )
        .unwrap();
        let group = process.group;
        assert!(matches!(process.next(), Next::Line(line) if line == "ready"));
        let _reaper = Reaper(grandchild(dir.path()));
        assert!(matches!(process.next(), Next::TimedOut));
        assert!(process.wait().unwrap().is_none());
        assert!(!alive(grandchild(dir.path())), "the grandchild is gone");
        assert!(!alive(group as libc::pid_t), "the child is gone");
        assert!(!process_group::registered(group));
    }

    #[cfg(unix)]
    #[test]
    fn killing_or_dropping_the_process_ends_its_whole_group() {
        for drop_it in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let process = LineProcess::start(
                &with_grandchild("trap '' TERM; echo ready; sleep 30"),
                Some(dir.path()),
                Vec::new(),
                Duration::from_secs(60),
                |_| {},
            )
            .unwrap();
            let group = process.group;
            assert!(matches!(process.next(), Next::Line(line) if line == "ready"));
            let _reaper = Reaper(grandchild(dir.path()));
            let started = Instant::now();
            if drop_it {
                drop(process);
            } else {
                process.kill();
            }
            let took = started.elapsed();
            assert!(took < Duration::from_secs(2), "{took:?}");
            assert!(!alive(grandchild(dir.path())), "drop: {drop_it}");
            assert!(!alive(group as libc::pid_t), "drop: {drop_it}");
            assert!(!process_group::registered(group));
        }
    }

    #[test]
    fn a_child_that_leaves_nothing_behind_is_not_waited_for() {
        let process = LineProcess::start(
            &sh("echo x"),
            None,
            Vec::new(),
            Duration::from_secs(60),
            |_| {},
        )
        .unwrap();
        assert!(matches!(process.next(), Next::Line(line) if line == "x"));
        assert!(matches!(process.next(), Next::End));
        let started = Instant::now();
        assert!(process.wait().unwrap().unwrap().success());
        let took = started.elapsed();
        assert!(took < process_group::GRACE, "{took:?}");
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
