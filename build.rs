//! Build script: puts the git commit into `ragate --version` when built from a git checkout.
//!
//! Sets `RAGATE_VERSION` to `0.1.0 (abc123def456)` (12 hex digits of `HEAD`, `-dirty` appended
//! when `git status --porcelain` lists anything) and `RAGATE_COMMIT` to the bracketed part; from a
//! crates.io or wheel source build (no `.git`, or no `git` on PATH, or a checkout that is not this
//! crate's own) `RAGATE_VERSION` is the bare version and `RAGATE_COMMIT` is empty.
//! `RAGATE_COMMIT_SHA` is the full 40-hex `HEAD` (empty without git): `ragate init` pins the
//! scaffolded workflow's `uses: ragate-dev/ragate@<sha>` to it.
//!
//! Reruns only when what it reports can change: `HEAD`, the branch it points to (loose or packed),
//! and the sources (a change there rebuilds the crate anyway, and may flip the `-dirty` mark).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    for path in ["build.rs", "Cargo.toml", "Cargo.lock", "src"] {
        println!("cargo:rerun-if-changed={path}");
    }
    let (commit, sha) = commit(&manifest_dir).unwrap_or_default();
    let version = env!("CARGO_PKG_VERSION");
    if commit.is_empty() {
        println!("cargo:rustc-env=RAGATE_VERSION={version}");
    } else {
        println!("cargo:rustc-env=RAGATE_VERSION={version} ({commit})");
    }
    println!("cargo:rustc-env=RAGATE_COMMIT={commit}");
    println!("cargo:rustc-env=RAGATE_COMMIT_SHA={sha}");
}

/// (`abc123def456` or `abc123def456-dirty`, the full 40-hex `HEAD`), when `dir` is the top of a
/// git work tree.
fn commit(dir: &Path) -> Option<(String, String)> {
    // A crate unpacked inside some other repository (a vendored copy, CARGO_HOME under a git
    // checkout) must not report that repository's commit.
    let top = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    watch_git_files(dir);
    let sha = git(dir, &["rev-parse", "HEAD"])?;
    if sha.len() != 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let hash = sha[..12].to_string();
    let dirty = !git(dir, &["status", "--porcelain"])?.is_empty();
    let commit = if dirty { format!("{hash}-dirty") } else { hash };
    Some((commit, sha))
}

/// `rerun-if-changed` on `HEAD`, the ref it names and `packed-refs`: a commit or a checkout
/// changes one of them. Only existing files: cargo reruns the script on every build for a missing one.
fn watch_git_files(dir: &Path) {
    let mut files = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(reference) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        files.push(reference);
    }
    for file in files {
        if let Some(path) = git(dir, &["rev-parse", "--git-path", &file]) {
            let path = dir.join(path);
            if path.is_file() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
}

/// `git ARGS` run in `dir`: its trimmed stdout, or `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(String::from_utf8(output.stdout).ok()?.trim().to_string())
}
