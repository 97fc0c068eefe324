//! `.github/scripts/sticky-comment.js` against a mock of GitHub's REST API on loopback: the
//! script adopts (edits, or deletes as a duplicate) only comments its token's identity wrote,
//! never another user's comment that starts with its marker, and never posts a second comment;
//! a body cut at GitHub's limit closes the code fence and the `<details>` the cut left open.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::path_str;

const MARKER: &str = "<!-- ragate-gate:smoke -->";

/// A comment on the mock pull request.
#[derive(Clone, Debug, PartialEq)]
struct Comment {
    id: u64,
    login: String,
    body: String,
}

/// The mock API's state: the comments, who the token is (None: GET /user is refused, as it is
/// for the workflow's GITHUB_TOKEN), the login comments are created as, the requests seen.
struct Api {
    comments: Vec<Comment>,
    user: Option<String>,
    posts_as: String,
    next_id: u64,
    requests: Vec<String>,
}

fn comment(id: u64, login: &str, body: &str) -> Comment {
    Comment {
        id,
        login: login.to_string(),
        body: body.to_string(),
    }
}

fn as_json(c: &Comment) -> Value {
    json!({
        "id": c.id,
        "body": c.body,
        "user": { "login": c.login, "type": if c.login.ends_with("[bot]") { "Bot" } else { "User" } },
        "html_url": format!("https://github.com/o/r/pull/1#issuecomment-{}", c.id),
    })
}

/// One request: (method, path, body).
fn read_request(stream: &TcpStream) -> Option<(String, String, Value)> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        if header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some((method, path, body))
}

fn respond(api: &Mutex<Api>, method: &str, path: &str, body: &Value) -> (u16, Value) {
    let mut api = api.lock().unwrap();
    api.requests.push(format!("{method} {path}"));
    let comment_id = path
        .strip_prefix("/repos/o/r/issues/comments/")
        .and_then(|id| id.parse::<u64>().ok());
    match (method, path, comment_id) {
        ("GET", "/user", _) => match &api.user {
            Some(login) => (200, json!({ "login": login })),
            None => (
                403,
                json!({ "message": "Resource not accessible by integration" }),
            ),
        },
        ("GET", p, _) if p.starts_with("/repos/o/r/issues/1/comments") => (
            200,
            Value::Array(api.comments.iter().map(as_json).collect()),
        ),
        ("POST", "/repos/o/r/issues/1/comments", _) => {
            let id = api.next_id;
            api.next_id += 1;
            let login = api.posts_as.clone();
            let created = comment(id, &login, body["body"].as_str().unwrap_or_default());
            api.comments.push(created.clone());
            (201, as_json(&created))
        }
        // A token with write access may edit and delete anyone's comment, as on GitHub.
        ("PATCH", _, Some(id)) => match api.comments.iter_mut().find(|c| c.id == id) {
            Some(c) => {
                c.body = body["body"].as_str().unwrap_or_default().to_string();
                let edited = c.clone();
                (200, as_json(&edited))
            }
            None => (404, json!({ "message": "Not Found" })),
        },
        ("DELETE", _, Some(id)) => {
            api.comments.retain(|c| c.id != id);
            (204, Value::Null)
        }
        _ => (404, json!({ "message": "Not Found" })),
    }
}

/// Serves the mock API on loopback; returns its base URL.
fn serve(api: Arc<Mutex<Api>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let Some((method, path, body)) = read_request(&stream) else {
                continue;
            };
            let (status, reply) = respond(&api, &method, &path, &body);
            let text = if reply.is_null() {
                String::new()
            } else {
                reply.to_string()
            };
            let response = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
            let _ = stream.write_all(response.as_bytes());
        }
    });
    url
}

/// A minimal Octokit over the mock API, as actions/github-script hands the script one.
const CLIENT: &str = r#"
const base = process.env.API;
async function call(method, path, body) {
  const r = await fetch(base + path, { method, headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) { const e = new Error(text); e.status = r.status; throw e; }
  return { status: r.status, data: text ? JSON.parse(text) : null };
}
const github = {
  paginate: async (fn, params) => (await fn(params)).data,
  rest: {
    users: { getAuthenticated: () => call('GET', '/user') },
    issues: {
      listComments: ({ owner, repo, issue_number }) => call('GET', `/repos/${owner}/${repo}/issues/${issue_number}/comments`),
      createComment: ({ owner, repo, issue_number, body }) => call('POST', `/repos/${owner}/${repo}/issues/${issue_number}/comments`, { body }),
      updateComment: ({ owner, repo, comment_id, body }) => call('PATCH', `/repos/${owner}/${repo}/issues/comments/${comment_id}`, { body }),
      deleteComment: ({ owner, repo, comment_id }) => call('DELETE', `/repos/${owner}/${repo}/issues/comments/${comment_id}`),
    },
  },
};
const context = { repo: { owner: 'o', repo: 'r' } };
const core = { info: (m) => console.log(m) };
"#;

/// Runs `upsert` (with `author`, if any) against a mock holding `comments`; returns the
/// comments afterwards and the requests made.
fn upsert(
    comments: Vec<Comment>,
    user: Option<&str>,
    posts_as: &str,
    author: Option<&str>,
) -> (Vec<Comment>, Vec<String>) {
    let api = Arc::new(Mutex::new(Api {
        comments,
        user: user.map(str::to_string),
        posts_as: posts_as.to_string(),
        next_id: 100,
        requests: Vec::new(),
    }));
    let url = serve(Arc::clone(&api));
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "**✅ 3 of 3 checks passed** · tier smoke\n").unwrap();
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/scripts/sticky-comment.js");
    let program = format!(
        "const sticky = require({module});\n{CLIENT}\n\
         sticky.upsert({{ github, context, core, prNumber: 1, tier: 'smoke', summaryPath: {summary},\n\
           runUrl: 'https://github.com/o/r/actions/runs/7', sha: 'abcdef1234567', author: {author} }})\n\
           .catch((e) => {{ console.error(e.status, e.message); process.exit(1); }});",
        module = serde_json::to_string(path_str(&module)).unwrap(),
        summary = serde_json::to_string(path_str(&summary)).unwrap(),
        author = serde_json::to_string(&author).unwrap(),
    );
    let output = Command::new("node")
        .args(["-e", &program])
        .env("API", &url)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let api = api.lock().unwrap();
    (api.comments.clone(), api.requests.clone())
}

fn fake() -> Comment {
    comment(
        1,
        "mallory",
        &format!("{MARKER}\n**✅ 25 of 25 checks passed** · tier smoke"),
    )
}

fn is_fresh(c: &Comment) -> bool {
    c.body.starts_with(MARKER) && c.body.contains("3 of 3 checks passed")
}

#[test]
fn another_users_comment_with_the_marker_is_left_alone_and_the_bots_own_is_edited() {
    let bot = comment(2, "github-actions[bot]", &format!("{MARKER}\nold status"));
    let (after, requests) = upsert(vec![fake(), bot], None, "github-actions[bot]", None);
    assert_eq!(after.len(), 2, "no comment added or deleted: {after:?}");
    assert_eq!(after[0], fake(), "another user's comment is untouched");
    assert_eq!(after[1].id, 2);
    assert!(is_fresh(&after[1]), "{after:?}");
    assert!(
        !requests.iter().any(|r| r.ends_with("/comments/1")),
        "{requests:?}"
    );
}

#[test]
fn with_only_a_fake_comment_the_bot_posts_its_own_and_a_second_run_edits_it() {
    let (after, requests) = upsert(vec![fake()], None, "github-actions[bot]", None);
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(after[0], fake());
    assert_eq!(after[1].login, "github-actions[bot]");
    assert!(is_fresh(&after[1]), "{after:?}");
    assert!(
        requests.contains(&"POST /repos/o/r/issues/1/comments".to_string()),
        "{requests:?}"
    );
    // The next run finds the bot's comment and edits it: still one of each.
    let mut stale = after.clone();
    stale[1].body = format!("{MARKER}\nold status");
    let (again, requests) = upsert(stale, None, "github-actions[bot]", None);
    assert_eq!(again.len(), 2, "no duplicate: {again:?}");
    assert_eq!(again[0], fake());
    assert!(is_fresh(&again[1]), "{again:?}");
    assert!(
        !requests.iter().any(|r| r.starts_with("POST")),
        "{requests:?}"
    );
}

#[test]
fn of_two_bot_comments_the_first_is_kept_and_a_users_is_never_deleted() {
    let comments = vec![
        comment(2, "github-actions[bot]", &format!("{MARKER}\nfirst")),
        fake(),
        comment(3, "github-actions[bot]", &format!("{MARKER}\nsecond")),
        comment(4, "octocat", &format!("{MARKER}\nanother fake")),
    ];
    let (after, _) = upsert(comments, None, "github-actions[bot]", None);
    let ids: Vec<u64> = after.iter().map(|c| c.id).collect();
    assert_eq!(ids, [2, 1, 4], "the duplicate bot comment went: {after:?}");
    assert!(is_fresh(&after[0]));
    assert_eq!(after[1], fake());
    assert!(after[2].body.ends_with("another fake"));
}

#[test]
fn the_tokens_own_login_or_the_configured_author_decides_whose_comments_are_ragates() {
    // A personal access token: GET /user names it; github-actions[bot]'s comment is not its own.
    let comments = vec![
        comment(
            2,
            "github-actions[bot]",
            &format!("{MARKER}\nsomeone else's"),
        ),
        comment(3, "Ragate-Bot", &format!("{MARKER}\nold status")),
    ];
    let (after, _) = upsert(comments, Some("ragate-bot"), "ragate-bot", None);
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after[0].body.ends_with("someone else's"));
    assert!(
        is_fresh(&after[1]),
        "logins compare case-insensitively: {after:?}"
    );
    // A GitHub App's token, named by the action's comment-author input.
    let comments = vec![
        comment(
            2,
            "github-actions[bot]",
            &format!("{MARKER}\nsomeone else's"),
        ),
        comment(3, "my-app[bot]", &format!("{MARKER}\nold status")),
    ];
    let (after, requests) = upsert(comments, None, "my-app[bot]", Some("my-app[bot]"));
    assert!(after[0].body.ends_with("someone else's"));
    assert!(is_fresh(&after[1]), "{after:?}");
    assert!(
        !requests.contains(&"GET /user".to_string()),
        "a configured author needs no lookup: {requests:?}"
    );
}

/// The comment body `sticky.body` makes of `summary` (a JavaScript expression).
fn comment_body(summary: &str) -> String {
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/scripts/sticky-comment.js");
    let program = format!(
        "const sticky = require({});\nconst summary = {summary};\n\
         process.stdout.write(sticky.body({{ tier: 'smoke', summary, runUrl: 'https://x', sha: 'abcdef123' }}));",
        serde_json::to_string(path_str(&module)).unwrap()
    );
    let output = Command::new("node")
        .args(["-e", &program])
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `<details>` blocks still open at the end of each line of `text` outside code fences, and
/// whether a fence is open at the end.
fn open_blocks(text: &str) -> (Vec<usize>, bool) {
    let (mut depth, mut fenced, mut depths) = (0usize, false, Vec::new());
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            depth += line.matches("<details").count();
            depth = depth.saturating_sub(line.matches("</details>").count());
        }
        depths.push(depth);
    }
    (depths, fenced)
}

#[test]
fn a_cut_inside_details_closes_them_before_the_note_and_the_footer() {
    // A summary as ragate writes it: the verdict, then folded sections; the regressed queries,
    // with a fenced answer diff, run far past the limit, so the cut falls inside two of them.
    let summary = "'**❌ 1 of 3 checks failed** · tier smoke\\n\\n\
         <details><summary>Regressed queries</summary>\\n\\n\
         <details open><summary>recall@5 [all]</summary>\\n\\n' + \
         '- q-ä→ö: recall 1.00 → 0.00\\n'.repeat(1000) + '```diff\\n' + '- answer line\\n'.repeat(3000) + \
         '```\\n\\n</details>\\n\\n</details>\\n'";
    let body = comment_body(summary);
    assert!(body.len() <= 65536 - 512, "{} bytes", body.len());
    assert!(body.contains("Summary truncated"), "the summary was cut");
    let (depths, fenced) = open_blocks(&body);
    assert!(!fenced, "the fence is closed");
    assert_eq!(depths.last(), Some(&0), "every <details> is closed");
    let note = body
        .lines()
        .position(|l| l.contains("Summary truncated"))
        .unwrap();
    assert_eq!(depths[note], 0, "the note is outside every fold");
    let footer = body
        .lines()
        .position(|l| l.starts_with("<sub>Commit"))
        .unwrap();
    assert_eq!(depths[footer], 0);
    assert!(
        body.contains("- answer line\n```\n\n</details>\n\n</details>\n\n> [!NOTE]"),
        "the fence, then both folds, then the note: {}",
        &body[body.len() - 400..]
    );

    // A summary that fits is left as it is; so is a cut outside any fold.
    let short = comment_body("'<details><summary>x</summary>\\n\\n- a\\n\\n</details>\\n'");
    assert!(
        short.contains("- a\n\n</details>\n") && short.matches("</details>").count() == 1,
        "{short}"
    );
    assert!(!short.contains("Summary truncated"));
    let flat = comment_body("'- line\\n'.repeat(30000)");
    assert!(!flat.contains("</details>"), "nothing to close");
    assert!(flat.contains("- line\n\n> [!NOTE]"));

    // Folds nested deeper than the cut can close (an untrusted artifact's summary): cut back to
    // the last one it can, the body still under the limit.
    let nested = comment_body("'<details>\\n'.repeat(5000) + '- x\\n'.repeat(30000)");
    assert!(nested.len() <= 65536 - 512, "{} bytes", nested.len());
    let (depths, _) = open_blocks(&nested);
    assert_eq!(depths.last(), Some(&0), "every <details> is closed");
}
