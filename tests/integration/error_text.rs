//! No code of src/ decides what went wrong from an error's message text: `error.to_string()
//! .contains(..)`, `message.starts_with("unknown field")` and the like break silently when a
//! message is reworded. A caller that branches on what went wrong matches a typed error's
//! variant instead (`Error::Missing`, `PassFailure::KindUnread`, `SerdeUnknown::Field`, ...).
//! Tests (`#[cfg(test)]` modules and the files they declare) may check messages: they are left
//! out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex_lite::Regex;

/// What reads an error's message to decide something: a text test on an error's `to_string()`
/// (the receiver named as errors are: `e`, `err`, `error`, `*_error`, `cause`, `inner()`,
/// `source()`), or on a variable named as messages are (`msg`, `message`, `*_message`), or such
/// a text compared with `==`.
fn patterns() -> Vec<Regex> {
    let test = r"\s*\.\s*(contains|starts_with|ends_with|find|rfind|matches)\s*\(";
    let error = r"\b(e|err|error|\w+_err|\w+_error|cause|inner\(\)|source\(\))";
    let message = r"\b(msg|message|\w+_message)";
    [
        format!(r"{error}\s*\.\s*to_string\(\){test}"),
        format!(r"{message}{test}"),
        format!(r"{error}\s*\.\s*to_string\(\)\s*[!=]="),
        format!(r"{message}\s*[!=]=\s*"),
        format!(r"[!=]=\s*{error}\s*\.\s*to_string\(\)"),
    ]
    .iter()
    .map(|pattern| Regex::new(pattern).unwrap())
    .collect()
}

/// The lines of `source` (`file:line: text`) that branch on an error's message text, outside
/// comments and `#[cfg(test)]` modules written inline.
fn offending_lines(file: &str, source: &str, patterns: &[Regex]) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_tests = false;
    let mut cfg_test = false;
    for (index, line) in source.lines().enumerate() {
        let code = line.trim_start();
        if in_tests {
            // rustfmt closes a top-level module with `}` alone at the start of a line.
            in_tests = line != "}";
            continue;
        }
        if code.starts_with("#[cfg(test)]") {
            cfg_test = true;
            continue;
        }
        if cfg_test && code.starts_with("mod ") && code.ends_with('{') {
            in_tests = true;
        }
        if !code.starts_with("#[") {
            cfg_test = false;
        }
        if in_tests || code.starts_with("//") {
            continue;
        }
        if patterns.iter().any(|pattern| pattern.is_match(code)) {
            found.push(format!("{file}:{}: {}", index + 1, code));
        }
    }
    found
}

/// The files that `#[cfg(test)] mod name;` (with `#[path = ".."]` when given) declares in
/// `source`, the file at `path`: files holding only tests.
fn test_only_files(path: &Path, source: &str) -> Vec<PathBuf> {
    let dir = path.parent().unwrap();
    let stem = path.file_stem().unwrap().to_string_lossy();
    let children = if matches!(stem.as_ref(), "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(stem.as_ref())
    };
    let mut files = Vec::new();
    let mut cfg_test = false;
    let mut explicit: Option<String> = None;
    for line in source.lines().map(str::trim) {
        if line.starts_with("#[cfg(test)]") {
            cfg_test = true;
        } else if cfg_test && let Some(rest) = line.strip_prefix("#[path = \"") {
            explicit = rest.split('"').next().map(str::to_string);
        } else if cfg_test
            && let Some(name) = line.strip_prefix("mod ").and_then(|l| l.strip_suffix(';'))
        {
            match explicit.take() {
                Some(explicit) => files.push(dir.join(explicit)),
                None => {
                    files.push(children.join(format!("{name}.rs")));
                    files.push(children.join(name).join("mod.rs"));
                }
            }
            cfg_test = false;
        } else if !line.starts_with("#[") {
            cfg_test = false;
            explicit = None;
        }
    }
    files
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The lines of the crate under `src` that branch on an error's message text.
fn branches_on_message_text(src: &Path) -> Vec<String> {
    let files = rust_files(src);
    let sources: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|path| {
            let source = std::fs::read_to_string(&path).unwrap();
            (path, source)
        })
        .collect();
    let test_only: BTreeSet<PathBuf> = sources
        .iter()
        .flat_map(|(path, source)| test_only_files(path, source))
        .collect();
    // A test-only module's own children are test-only too.
    let test_only_dirs: Vec<PathBuf> = test_only
        .iter()
        .map(|file| match file.file_name() {
            Some(name) if name == "mod.rs" => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        })
        .collect();
    let patterns = patterns();
    sources
        .iter()
        .filter(|(path, _)| {
            !test_only.contains(path) && !test_only_dirs.iter().any(|dir| path.starts_with(dir))
        })
        .flat_map(|(path, source)| {
            let file = path.strip_prefix(src).unwrap().display().to_string();
            offending_lines(&format!("src/{file}"), source, &patterns)
        })
        .collect()
}

#[test]
fn no_code_branches_on_an_error_message_text() {
    // RAGATE_CHECKED_SRC: another tree's src/ to check (an older commit's, say).
    let src = std::env::var_os("RAGATE_CHECKED_SRC").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        PathBuf::from,
    );
    let found = branches_on_message_text(&src);
    assert!(
        found.is_empty(),
        "code that decides what went wrong from an error's message text; give the error a typed \
         variant and match on it:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_text_tests_on_errors_and_leaves_other_text_alone() {
    let patterns = patterns();
    // The branches this check was written against (src/config/locate.rs, src/config/mod.rs and
    // src/suggest.rs before their errors were typed).
    let branching = "\
    if !error.to_string().contains(FOUND) {
        && error.inner().to_string().contains(raw_judges::KIND_UNREAD)
    if message.starts_with(\"unknown field\")
    if !(message.starts_with(\"unknown field\") || message.starts_with(\"unknown variant\")) {
        Err(e) if e.to_string() == \"timed out\" => retry(),
        if msg.ends_with(\"not found\") {
        if judge_error.to_string().find(\"429\").is_some() {
";
    let found = offending_lines("old.rs", branching, &patterns);
    assert_eq!(found.len(), branching.lines().count(), "{found:#?}");
    let fine = "\
    if name.starts_with('.') {
    let plain = text.contains(\"://\");
    message = message.replace(expanded.as_str(), written);
    if let Some(stripped) = message.strip_suffix(&suffix) {
    // if !error.to_string().contains(FOUND) {
    format!(\"{error}: {message}\")
    assert_eq!(error.key, \"x\");
#[cfg(test)]
mod tests {
    assert!(error.to_string().contains(\"blocked\"), \"{error}\");
}
";
    assert_eq!(
        offending_lines("fine.rs", fine, &patterns),
        Vec::<String>::new()
    );
}
