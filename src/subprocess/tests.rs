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
