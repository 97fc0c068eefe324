//! `.github/scripts/gate-report.py`, run by python3 as the action and rag-gate-comment.yml run it:
//! the outputs `status` and `failed-checks` from a ragate-gate/1 document and the exit code, the
//! comment decision of each `comment-mode`, and its refusal of documents it cannot trust.

use std::path::Path;
use std::process::Command;

use crate::path_str;

/// A ragate-gate/1 document with this run status and these check statuses.
fn document(status: &str, exit_code: i32, checks: &[&str]) -> String {
    let checks: Vec<serde_json::Value> = checks
        .iter()
        .enumerate()
        .map(|(i, s)| serde_json::json!({"name": format!("check {i}"), "status": s}))
        .collect();
    serde_json::json!({
        "format": "ragate-gate/1",
        "tier": "smoke",
        "status": status,
        "exit_code": exit_code,
        "checks": checks,
    })
    .to_string()
}

/// Runs the script on `json` (written to a file unless None) and returns (exit code, the
/// `key=value` lines as pairs, stderr).
fn report(
    json: Option<&[u8]>,
    exit_code: &str,
    mode: &str,
    exists: &str,
) -> (i32, Vec<(String, String)>, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gate.json");
    if let Some(json) = json {
        std::fs::write(&path, json).unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/scripts/gate-report.py");
    let output = Command::new("python3")
        .arg(&script)
        .args(["--json", path_str(&path), "--exit-code", exit_code])
        .args(["--comment-mode", mode, "--comment-exists", exists])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let pairs = stdout
        .lines()
        .map(|l| {
            let (k, v) = l.split_once('=').expect("key=value lines only");
            (k.to_string(), v.to_string())
        })
        .collect();
    (
        output.status.code().unwrap(),
        pairs,
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn get<'a>(pairs: &'a [(String, String)], key: &str) -> &'a str {
    &pairs.iter().find(|(k, _)| k == key).expect(key).1
}

/// The comment decision for a document, an exit code, a mode and whether a comment exists.
fn decision(json: &str, exit_code: &str, mode: &str, exists: &str) -> String {
    let (code, pairs, stderr) = report(Some(json.as_bytes()), exit_code, mode, exists);
    assert_eq!(code, 0, "{stderr}");
    get(&pairs, "comment").to_string()
}

#[test]
fn on_change_is_quiet_only_when_nothing_moved_and_no_comment_exists() {
    let all_pass = document("pass", 0, &["pass", "pass"]);
    let inconclusive = document("pass", 0, &["pass", "inconclusive"]);
    let improved = document("pass", 0, &["improved", "pass"]);
    let regression = document("regression", 1, &["fail", "pass"]);
    assert_eq!(decision(&all_pass, "0", "on-change", "false"), "skip");
    assert_eq!(decision(&all_pass, "0", "on-change", "true"), "update");
    assert_eq!(decision(&inconclusive, "0", "on-change", "false"), "post");
    assert_eq!(decision(&improved, "0", "on-change", "false"), "post");
    assert_eq!(decision(&regression, "1", "on-change", "false"), "post");
    assert_eq!(decision(&regression, "1", "on-change", "true"), "update");
}

#[test]
fn on_failure_posts_only_when_the_gate_does_not_pass() {
    let inconclusive = document("pass", 0, &["inconclusive"]);
    let regression = document("regression", 1, &["fail"]);
    let no_baseline = document("no-baseline", 2, &[]);
    assert_eq!(decision(&inconclusive, "0", "on-failure", "false"), "skip");
    assert_eq!(decision(&inconclusive, "0", "on-failure", "true"), "skip");
    assert_eq!(decision(&regression, "1", "on-failure", "false"), "post");
    assert_eq!(decision(&no_baseline, "2", "on-failure", "true"), "update");
}

#[test]
fn always_posts_even_a_quiet_pass() {
    let all_pass = document("pass", 0, &["pass"]);
    assert_eq!(decision(&all_pass, "0", "always", "false"), "post");
    assert_eq!(decision(&all_pass, "0", "always", "true"), "update");
}

#[test]
fn the_verdict_says_inconclusive_where_the_status_says_pass() {
    let verdict = |json: &str, exit_code: &str| {
        let (code, pairs, stderr) = report(Some(json.as_bytes()), exit_code, "on-change", "false");
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.is_empty(), "{stderr}");
        (
            get(&pairs, "status").to_string(),
            get(&pairs, "verdict").to_string(),
        )
    };
    let inconclusive = document("pass", 0, &["pass", "inconclusive"]);
    assert_eq!(
        verdict(&inconclusive, "0"),
        ("pass".into(), "inconclusive".into())
    );
    let mut stated: serde_json::Value = serde_json::from_str(&inconclusive).unwrap();
    stated["verdict"] = "inconclusive".into();
    assert_eq!(
        verdict(&stated.to_string(), "0"),
        ("pass".into(), "inconclusive".into())
    );
    // A verdict that does not belong to the status is not believed.
    stated["verdict"] = "regression".into();
    assert_eq!(
        verdict(&stated.to_string(), "0"),
        ("pass".into(), "inconclusive".into())
    );
    let passing = document("pass", 0, &["pass"]);
    assert_eq!(verdict(&passing, "0"), ("pass".into(), "pass".into()));
    let failing = document("regression", 1, &["fail", "inconclusive"]);
    assert_eq!(
        verdict(&failing, "1"),
        ("regression".into(), "regression".into())
    );
    // A shard's document: the exit code's status, no warning, nothing to comment on.
    let shard =
        serde_json::json!({"format": "ragate-gate-shard/1", "tier": "smoke", "shard": "1/2",
        "queries": 3, "output": "out/shard.json", "exit_code": 0})
        .to_string();
    assert_eq!(verdict(&shard, "0"), ("pass".into(), "pass".into()));
    assert_eq!(decision(&shard, "0", "on-change", "false"), "skip");
}

#[test]
fn failed_checks_count_failures_and_errors() {
    let json = document(
        "regression",
        1,
        &["fail", "error", "inconclusive", "pass", "fail", "skipped"],
    );
    let (code, pairs, stderr) = report(Some(json.as_bytes()), "1", "on-change", "false");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(get(&pairs, "status"), "regression");
    assert_eq!(get(&pairs, "failed-checks"), "3");
    assert_eq!(get(&pairs, "changed"), "true");
}

#[test]
fn a_status_that_contradicts_the_exit_code_is_an_error() {
    // A document claiming a pass from a run that exited 1 (e.g. an altered artifact).
    let json = document("pass", 0, &["pass"]);
    let (code, pairs, stderr) = report(Some(json.as_bytes()), "1", "on-change", "false");
    assert_eq!(code, 0);
    assert_eq!(get(&pairs, "status"), "error");
    assert_eq!(get(&pairs, "comment"), "post");
    assert!(
        stderr.contains("says 'pass' but ragate exited with 1"),
        "{stderr}"
    );
}

#[test]
fn untrusted_documents_fall_back_to_the_exit_code() {
    let bad_check = document("pass", 0, &["pass", "$(rm -rf /)"]);
    let (_, pairs, stderr) = report(Some(bad_check.as_bytes()), "0", "on-change", "false");
    assert_eq!(
        get(&pairs, "status"),
        "error",
        "an unknown check status is not a pass"
    );
    assert!(stderr.contains("no valid status"), "{stderr}");

    let (_, pairs, stderr) = report(None, "0", "on-change", "false");
    assert_eq!(
        get(&pairs, "status"),
        "pass",
        "no document: the exit code decides"
    );
    assert_eq!(get(&pairs, "failed-checks"), "");
    assert!(stderr.contains("no gate JSON at"), "{stderr}");

    let (_, pairs, _) = report(Some(b"{\"format\": \"other\"}"), "1", "on-change", "false");
    assert_eq!(get(&pairs, "status"), "regression");

    let (_, pairs, _) = report(Some(b"not json"), "7", "on-change", "false");
    assert_eq!(get(&pairs, "status"), "error");

    let mut huge = document("pass", 0, &["pass"]).into_bytes();
    huge.extend(std::iter::repeat_n(b' ', 16 * 1024 * 1024));
    let (_, pairs, stderr) = report(Some(&huge), "1", "on-change", "false");
    assert_eq!(get(&pairs, "status"), "regression");
    assert!(stderr.contains("is over 16777216 bytes"), "{stderr}");
}

#[test]
fn a_bad_command_line_exits_2() {
    let json = document("pass", 0, &[]);
    let (code, pairs, stderr) = report(Some(json.as_bytes()), "0", "sometimes", "false");
    assert_eq!(code, 2, "{stderr}");
    assert!(pairs.is_empty());
    assert!(stderr.contains("--comment-mode must be one of"), "{stderr}");
    let (code, _, _) = report(Some(json.as_bytes()), "zero", "always", "false");
    assert_eq!(code, 2);
}

/// Runs `code` with node, `sticky` bound to `.github/scripts/sticky-comment.js`; returns stdout.
fn node_sticky(code: &str) -> (bool, String, String) {
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/scripts/sticky-comment.js");
    let program = format!(
        "const sticky = require({});\n{code}",
        serde_json::to_string(path_str(&module)).unwrap()
    );
    let output = Command::new("node")
        .args(["-e", &program])
        .output()
        .expect("node runs");
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn the_comment_body_stays_under_the_limit_and_marks_its_tier() {
    // 30,000 lines of a fenced block with multi-byte characters: cut at a line, fence closed.
    let (ok, stdout, stderr) = node_sticky(
        "const summary = '## ragate\\n```diff\\n' + '- ä→ö line\\n'.repeat(30000);\n\
         const body = sticky.body({ tier: 'smoke', summary, runUrl: 'https://x', sha: 'abcdef123' });\n\
         console.log(JSON.stringify({ bytes: Buffer.byteLength(body), head: body.split('\\n')[0],\n\
           fences: (body.match(/^\\s*```/gm) || []).length, note: body.includes('Summary truncated') }));",
    );
    assert!(ok, "{stderr}");
    let facts: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(facts["bytes"].as_u64().unwrap() <= 65536 - 512, "{facts}");
    assert_eq!(facts["head"], "<!-- ragate-gate:smoke -->");
    assert_eq!(facts["fences"].as_u64().unwrap() % 2, 0, "{facts}");
    assert_eq!(facts["note"], true);

    // A tier from an untrusted artifact cannot break out of the marker.
    let (ok, _, stderr) = node_sticky("sticky.marker('smoke --> <img src=x>');");
    assert!(!ok);
    assert!(stderr.contains("is not a plain name"), "{stderr}");
}

#[test]
fn the_comment_links_the_html_report_under_the_summary_even_when_cut() {
    let url = "https://github.com/o/r/actions/runs/7/artifacts/9";
    let (ok, stdout, stderr) = node_sticky(&format!(
        "const reportUrl = {url:?};\n\
         const short = sticky.body({{ tier: 'smoke', summary: '## ragate\\n', runUrl: 'https://x', sha: 'abcdef123', reportUrl }});\n\
         const none = sticky.body({{ tier: 'smoke', summary: '## ragate\\n', runUrl: 'https://x', sha: 'abcdef123' }});\n\
         const long = sticky.body({{ tier: 'smoke', summary: '- line\\n'.repeat(30000), runUrl: 'https://x', sha: 'abcdef123', reportUrl }});\n\
         console.log(JSON.stringify({{ short, none, long, longBytes: Buffer.byteLength(long) }}));"
    ));
    assert!(ok, "{stderr}");
    let facts: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let line = format!(
        "\n\n[HTML report]({url}) (artifact `ragate-report-smoke`: download, unzip, open report.html)\n\n---\n"
    );
    let short = facts["short"].as_str().unwrap();
    assert!(
        short.starts_with("<!-- ragate-gate:smoke -->\n## ragate\n"),
        "{short}"
    );
    assert!(
        short.contains(&line),
        "under the summary, above the footer: {short}"
    );
    assert!(!facts["none"].as_str().unwrap().contains("HTML report"));
    let long = facts["long"].as_str().unwrap();
    assert!(long.contains("Summary truncated"), "the summary was cut");
    assert!(long.contains(&line), "the link is never cut with it");
    assert!(facts["longBytes"].as_u64().unwrap() <= 65536 - 512);
}

#[test]
fn a_report_url_that_is_not_a_plain_https_url_is_refused() {
    for bad in [
        "https://x/a) [click](https://evil",
        "javascript:alert(1)",
        "http://example.com/report",
        "https://x/a b",
        "https://x/<img>",
    ] {
        let (ok, _, stderr) = node_sticky(&format!("sticky.reportLine('smoke', {bad:?});"));
        assert!(!ok, "{bad} was accepted");
        assert!(stderr.contains("is not a plain https URL"), "{stderr}");
    }
    let (ok, _, stderr) = node_sticky(
        "sticky.reportLine('smoke', 'https://github.com/o/r/actions/runs/7#artifacts');",
    );
    assert!(
        ok,
        "the run's artifacts page (the workflow_run comment): {stderr}"
    );
}

#[test]
fn malformed_documents_fall_back_to_the_exit_code_without_a_traceback() {
    let deep = format!(
        "{{\"format\": \"ragate-gate/1\", \"status\": {}0{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let digits = format!(
        "{{\"format\": \"ragate-gate/1\", \"status\": \"pass\", \"checks\": [], \"n\": {}}}",
        "7".repeat(100_000)
    );
    let list_status = r#"{"format": "ragate-gate/1", "status": ["pass"], "checks": []}"#;
    let list_check =
        r#"{"format": "ragate-gate/1", "status": "pass", "checks": [{"status": ["fail"]}]}"#;
    let object_check =
        r#"{"format": "ragate-gate/1", "status": "pass", "checks": [{"status": {"a": 1}}]}"#;
    for (name, json, exit_code, status) in [
        ("deep nesting", deep.as_str(), "1", "regression"),
        ("a 100,000-digit integer", digits.as_str(), "0", "pass"),
        ("a list as the run status", list_status, "1", "regression"),
        ("a list as a check status", list_check, "0", "error"),
        ("an object as a check status", object_check, "0", "error"),
    ] {
        let (code, pairs, stderr) = report(Some(json.as_bytes()), exit_code, "on-change", "false");
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(!stderr.contains("Traceback"), "{name}: {stderr}");
        assert_eq!(get(&pairs, "status"), status, "{name}: {stderr}");
        assert!(
            stderr.contains("::warning title=ragate gate-report::"),
            "{name}: {stderr}"
        );
        assert_eq!(pairs.len(), 5, "{name}: every output is set");
    }
}

#[test]
fn a_drift_warning_is_a_changed_pass_not_an_error() {
    let json = document("pass", 0, &["pass", "warn", "improved"]);
    let (code, pairs, stderr) = report(Some(json.as_bytes()), "0", "on-change", "false");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(get(&pairs, "status"), "pass", "{stderr}");
    assert_eq!(get(&pairs, "failed-checks"), "0");
    assert_eq!(get(&pairs, "changed"), "true");
    assert_eq!(get(&pairs, "comment"), "post");
    assert!(stderr.is_empty(), "no annotation: {stderr}");
}

#[test]
fn every_check_status_of_the_schema_is_known_to_the_script() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema/gate.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let statuses = schema["$defs"]["check"]["properties"]["status"]["enum"]
        .as_array()
        .expect("the schema lists the check statuses");
    assert!(statuses.len() >= 7, "{statuses:?}");
    for status in statuses {
        let status = status.as_str().unwrap();
        let json = document("pass", 0, &[status]);
        let (_, pairs, stderr) = report(Some(json.as_bytes()), "0", "always", "false");
        assert!(
            !stderr.contains("no valid status"),
            "`{status}` is unknown to gate-report.py: {stderr}"
        );
        let failed = if matches!(status, "fail" | "error") {
            "1"
        } else {
            "0"
        };
        assert_eq!(get(&pairs, "failed-checks"), failed, "{status}");
    }
}
