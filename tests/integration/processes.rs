//! The processes a pipeline or a command judge starts end with it: a grandchild that ignores
//! SIGTERM and holds the child's stdout neither outlives ragate nor hides the child's exit status,
//! on a timeout neither, and SIGTERM or SIGINT to ragate ends them too (exit 143 or 130).
#![cfg(unix)]

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::{Outcome, Ragate, clean_command, ragate_env};

/// A pipeline (`python3 pipeline.py MODE`, in the config's directory): it writes its pid to
/// `pipeline.pid`, starts a grandchild that ignores SIGTERM, holds its stdout and stderr and writes
/// its pid to `grandchild.pid`, then answers every query and exits 3, writing the time of its exit
/// to `exited` (mode `exit3`), or ignores SIGTERM itself and hangs (mode `hang`).
const PIPELINE: &str = r#"import json, os, signal, subprocess, sys, time

mode = sys.argv[1]
with open("pipeline.pid", "w") as f:
    f.write(str(os.getpid()))
subprocess.Popen(["sh", "-c", "trap '' TERM; echo $$ > grandchild.tmp; mv grandchild.tmp grandchild.pid; exec sleep 60"])
while not os.path.exists("grandchild.pid"):
    time.sleep(0.01)
if mode == "hang":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(60)
for line in sys.stdin:
    qid = json.loads(line)["qid"]
    print(json.dumps({"qid": qid, "retrieved": [{"doc_id": "d-" + qid}]}), flush=True)
with open("exited.tmp", "w") as f:
    f.write(repr(time.time()))
os.rename("exited.tmp", "exited")
sys.exit(3)
"#;

/// A `command` judge like the pipeline (its pid in `pipeline.pid`, the same grandchild): it
/// answers every request (an answer's one claim is the answer; every verdict true), then exits 3,
/// writing the time of its exit to `exited`.
const JUDGE: &str = r#"import json, os, subprocess, sys, time

requests = [json.loads(line) for line in sys.stdin if line.strip()]
with open("pipeline.pid", "w") as f:
    f.write(str(os.getpid()))
subprocess.Popen(["sh", "-c", "trap '' TERM; echo $$ > grandchild.tmp; mv grandchild.tmp grandchild.pid; exec sleep 60"])
while not os.path.exists("grandchild.pid"):
    time.sleep(0.01)
for request in requests:
    if request["task"] == "claims":
        print(json.dumps({"id": request["id"], "claims": [request["answer"]]}), flush=True)
    else:
        print(json.dumps({"id": request["id"], "verdict": True}), flush=True)
with open("exited.tmp", "w") as f:
    f.write(repr(time.time()))
os.rename("exited.tmp", "exited")
sys.exit(3)
"#;

/// 40 queries with answers (`run.jsonl`, for the judge) and a config with `pipeline` and
/// `judges` as given.
fn project(dir: &Path, pipeline: &str, judges: &str, metrics: &str) {
    let (mut qrels, mut run) = (String::new(), String::new());
    for i in 0..40 {
        writeln!(
            qrels,
            "{{\"qid\":\"q{i:02}\",\"query\":\"where are backups {i} kept\",\"gold_doc_ids\":[\"d-q{i:02}\"]}}"
        )
        .unwrap();
        let line = serde_json::json!({
            "qid": format!("q{i:02}"),
            "retrieved": [{"doc_id": format!("d-q{i:02}"), "text": format!("Backups {i} are kept in Frankfurt.")}],
            "answer": "Backups are kept in Frankfurt.",
        });
        writeln!(run, "{line}").unwrap();
    }
    std::fs::write(dir.join("qrels.jsonl"), qrels).unwrap();
    std::fs::write(dir.join("run.jsonl"), run).unwrap();
    std::fs::write(dir.join("pipeline.py"), PIPELINE).unwrap();
    std::fs::write(dir.join("judge.py"), JUDGE).unwrap();
    let config = format!(
        "version: 1
metrics: {metrics}
pipeline:
  {pipeline}
{judges}tiers:
  smoke: {{ qrels: qrels.jsonl, baseline: baseline.json }}
gate:
  rules:
    - {{ metric: recall@5, max_drop: 0.02 }}
"
    );
    std::fs::write(dir.join("eval-config.yaml"), config).unwrap();
}

/// The pid written to `file` in `dir`.
fn pid_in(dir: &Path, file: &str) -> libc::pid_t {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    text.trim().parse().unwrap()
}

/// Whether process `pid` runs: it exists and is not a zombie (dead, not yet reaped: where PID 1
/// reaps no orphans, as in some containers, dead grandchildren stay as zombies).
fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 sends nothing.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
            stat.rsplit_once(')')
                .is_none_or(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
}

/// SIGKILLs, when dropped, what a failed test left running.
struct Reaper<'a>(&'a Path);

impl Drop for Reaper<'_> {
    fn drop(&mut self) {
        for file in ["pipeline.pid", "grandchild.pid"] {
            if let Ok(text) = std::fs::read_to_string(self.0.join(file))
                && let Ok(pid) = text.trim().parse::<libc::pid_t>()
                && alive(pid)
            {
                // SAFETY: a pid this test's process had a moment ago.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

fn seconds_since_epoch() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// How many seconds before now the child exited (the time it wrote to `exited`): called as
/// ragate returns, how long ragate took to return after the child's exit.
fn seconds_since_child_exit(dir: &Path, outcome: &Outcome) -> f64 {
    let returned = seconds_since_epoch();
    let exited: f64 = std::fs::read_to_string(dir.join("exited"))
        .unwrap_or_else(|e| panic!("the child exited: {e}\n{}", outcome.stderr))
        .parse()
        .unwrap();
    returned - exited
}

/// No process of the child's is left: the child (`pipeline.pid`) and its grandchild.
fn assert_none_left(dir: &Path, stderr: &str) {
    for file in ["pipeline.pid", "grandchild.pid"] {
        let pid = pid_in(dir, file);
        assert!(!alive(pid), "{file} ({pid}) is still running\n{stderr}");
    }
}

#[test]
fn a_pipeline_that_exits_is_reported_by_its_exit_status_and_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let _reaper = Reaper(dir);
    // timeout_s far beyond the 3 s allowed: waiting for the grandchild's pipe to close would
    // show as a timeout.
    project(
        dir,
        "command: [python3, pipeline.py, exit3]\n  timeout_s: 20",
        "",
        "[recall@5]",
    );
    let outcome = Ragate::new(["gate", "--tier", "smoke", "--out", "out"]).run_in(dir);
    let after_exit = seconds_since_child_exit(dir, &outcome);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(
        outcome
            .stderr
            .contains("pipeline (command): `python3 pipeline.py exit3`: ")
            && outcome
                .stderr
                .contains("exited with exit status: 3: expected exit code 0"),
        "{}",
        outcome.stderr
    );
    assert!(
        after_exit < 3.0,
        "returned {after_exit:.2} s after the pipeline exited"
    );
    assert_none_left(dir, &outcome.stderr);
}

#[test]
fn a_pipeline_that_times_out_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let _reaper = Reaper(dir);
    // 4 s: time for Python to start and write both pid files on a loaded machine (with 1 s,
    // a timeout before the pid files exist left nothing to check).
    project(
        dir,
        "command: [python3, pipeline.py, hang]\n  timeout_s: 4",
        "",
        "[recall@5]",
    );
    let outcome = ragate_env(dir, &["gate", "--tier", "smoke", "--out", "out"], &[]);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(
        outcome
            .stderr
            .contains("timed out after timeout_s (4 s) with 0 of 40 queries answered"),
        "{}",
        outcome.stderr
    );
    assert_none_left(dir, &outcome.stderr);
}

#[test]
fn a_command_judge_that_exits_is_reported_by_its_exit_status_and_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let _reaper = Reaper(dir);
    project(
        dir,
        "run_file: run.jsonl",
        "judges:\n  ext: { kind: command, command: [python3, judge.py], timeout_s: 20 }\n",
        "[recall@5, { name: answer_relevance, judge: ext }]",
    );
    let outcome = Ragate::new(["gate", "--tier", "smoke", "--out", "out"]).run_in(dir);
    let after_exit = seconds_since_child_exit(dir, &outcome);
    assert_eq!(outcome.code, 2, "{}", outcome.stderr);
    assert!(
        outcome.stderr.contains("judge `ext`: `python3 judge.py`: ")
            && outcome
                .stderr
                .contains("it exited with code 3: expected exit code 0"),
        "{}",
        outcome.stderr
    );
    assert!(
        after_exit < 3.0,
        "returned {after_exit:.2} s after the judge exited"
    );
    assert_none_left(dir, &outcome.stderr);
}

#[test]
fn sigterm_or_sigint_to_ragate_ends_the_pipeline_s_processes() {
    for (signal, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        let _reaper = Reaper(dir);
        project(
            dir,
            "command: [python3, pipeline.py, hang]\n  timeout_s: 60",
            "",
            "[recall@5]",
        );
        let mut ragate = clean_command(env!("CARGO_BIN_EXE_ragate"))
            .args(["gate", "--tier", "smoke", "--out", "out"])
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while !dir.join("grandchild.pid").exists() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the pipeline did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let id = libc::pid_t::try_from(ragate.id()).unwrap();
        // SAFETY: ragate is this test's child, not reaped yet.
        unsafe { libc::kill(id, signal) };
        let signalled = Instant::now();
        let status = loop {
            if let Some(status) = ragate.try_wait().unwrap() {
                break status;
            }
            if signalled.elapsed() > Duration::from_secs(10) {
                let _ = ragate.kill();
                panic!("ragate did not exit within 10 s of signal {signal}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(ragate.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        assert_eq!(
            status.code(),
            Some(code),
            "signal {signal}: {status}\n{stderr}"
        );
        assert!(
            stderr.contains("ragate: stopped by SIG"),
            "signal {signal}: {stderr}"
        );
        assert!(
            signalled.elapsed() < Duration::from_secs(3),
            "signal {signal}: {:?}",
            signalled.elapsed()
        );
        assert_none_left(dir, &stderr);
    }
}
