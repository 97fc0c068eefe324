//! `.github/scripts/install-ragate.sh`, the action's install logic, run by bash against a local
//! "release" (a `file://` folder or a loopback HTTP server; no network): the release binary when
//! it exists and was built from these sources, its sha256 checked, else `cargo install --locked`
//! (a stand-in `cargo` on PATH records how it was called).

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::path_str;

const VERSION: &str = "0.1.0";
const TARGET: &str = "x86_64-unknown-linux-gnu";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/scripts/install-ragate.sh")
}

fn write_executable(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A test bed: the action's source tree, a release folder, a stand-in cargo and an install root.
struct Bed {
    dir: tempfile::TempDir,
}

impl Bed {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("source");
        std::fs::create_dir_all(source.join("src")).unwrap();
        std::fs::write(
            source.join("Cargo.toml"),
            "[package]\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        std::fs::write(source.join("Cargo.lock"), "# lock\n").unwrap();
        std::fs::write(source.join("src/main.rs"), "fn main() {}\n").unwrap();
        write_executable(
            &dir.path().join("bin/cargo"),
            "#!/usr/bin/env bash\nprintf '%s\\n' \"$@\" > \"$CARGO_ARGV\"\n",
        );
        Bed { dir }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn source_hash(&self) -> String {
        let output = Command::new("bash")
            .arg(script())
            .args(["hash", path_str(&self.path("source"))])
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    /// Publishes release v0.1.0 under release/v0.1.0: a tarball holding a `ragate` that prints
    /// `version_line`, SHA256SUMS (with `sum` instead of the real digest when given) and
    /// SOURCE-HASH (`hash`).
    fn publish(&self, version_line: &str, hash: &str, sum: Option<&str>) {
        let release = self.path(&format!("release/v{VERSION}"));
        let staging = self.path("staging");
        write_executable(
            &staging.join("ragate"),
            &format!("#!/usr/bin/env bash\necho '{version_line}'\n"),
        );
        std::fs::create_dir_all(&release).unwrap();
        let asset = format!("ragate-v{VERSION}-{TARGET}.tar.gz");
        let tar = Command::new("tar")
            .args([
                "-czf",
                path_str(&release.join(&asset)),
                "-C",
                path_str(&staging),
                "ragate",
            ])
            .status()
            .unwrap();
        assert!(tar.success());
        let digest = Command::new("sha256sum")
            .arg(release.join(&asset))
            .output()
            .unwrap();
        let digest = String::from_utf8(digest.stdout).unwrap();
        let digest = sum.unwrap_or_else(|| digest.split_whitespace().next().unwrap());
        std::fs::write(release.join("SHA256SUMS"), format!("{digest}  {asset}\n")).unwrap();
        std::fs::write(release.join("SOURCE-HASH"), format!("{hash}\n")).unwrap();
    }

    /// Runs `install-ragate.sh install` with the release at `url`; returns (exit code, stdout +
    /// stderr, cargo's arguments when the stand-in ran).
    fn install(&self, url: &str) -> (i32, String, Option<String>) {
        self.install_with(url, &[])
    }

    /// [`Bed::install`] with extra environment variables.
    fn install_with(&self, url: &str, env: &[(&str, &str)]) -> (i32, String, Option<String>) {
        let argv = self.path("cargo-argv");
        let path = format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let output = Command::new("bash")
            .arg(script())
            .arg("install")
            .env("PATH", path)
            .env("CARGO_ARGV", &argv)
            .env("RAGATE_VERSION", VERSION)
            .env("RAGATE_SOURCE", self.path("source"))
            .env("RAGATE_ROOT", self.path("root"))
            .env("RAGATE_RELEASE_URL", url)
            .env("RAGATE_TARGET", TARGET)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8_lossy(&output.stdout).to_string()
                + &String::from_utf8_lossy(&output.stderr),
            std::fs::read_to_string(&argv).ok(),
        )
    }

    fn file_url(&self) -> String {
        format!("file://{}", self.path("release").display())
    }

    fn installed_version(&self) -> Option<String> {
        let output = Command::new(self.path("root/bin/ragate"))
            .arg("--version")
            .output()
            .ok()?;
        Some(String::from_utf8(output.stdout).unwrap().trim().to_string())
    }
}

#[test]
fn a_release_built_from_these_sources_is_downloaded_and_verified() {
    let bed = Bed::new();
    bed.publish("ragate 0.1.0", &bed.source_hash(), None);
    let (code, log, cargo) = bed.install(&bed.file_url());
    assert_eq!(code, 0, "{log}");
    assert_eq!(cargo, None, "no build: {log}");
    assert_eq!(bed.installed_version().as_deref(), Some("ragate 0.1.0"));
    assert!(log.contains("(sha256 "), "{log}");
}

#[test]
fn a_checksum_mismatch_is_an_error_not_a_fallback() {
    let bed = Bed::new();
    bed.publish("ragate 0.1.0", &bed.source_hash(), Some(&"0".repeat(64)));
    let (code, log, cargo) = bed.install(&bed.file_url());
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("refusing to install it"), "{log}");
    assert_eq!(
        cargo, None,
        "an altered download never falls back to a build"
    );
    assert!(!bed.path("root/bin/ragate").exists());
}

/// A release binary built from git reports its commit after the version (build.rs).
#[test]
fn a_release_reporting_its_commit_after_the_version_is_installed() {
    let bed = Bed::new();
    bed.publish("ragate 0.1.0 (0123456789ab)", &bed.source_hash(), None);
    let (code, log, cargo) = bed.install(&bed.file_url());
    assert_eq!(code, 0, "{log}");
    assert_eq!(cargo, None, "no cargo install: {log}");
    assert_eq!(
        bed.installed_version().as_deref(),
        Some("ragate 0.1.0 (0123456789ab)")
    );
}

/// build.rs is part of what the binary is built from: changing it changes the source hash.
#[test]
fn the_source_hash_covers_build_rs() {
    let bed = Bed::new();
    let without = bed.source_hash();
    std::fs::write(bed.path("source/build.rs"), "fn main() {}\n").unwrap();
    let with = bed.source_hash();
    assert_ne!(without, with);
    std::fs::write(bed.path("source/build.rs"), "fn main() { }\n").unwrap();
    assert_ne!(bed.source_hash(), with);
}

#[test]
fn a_binary_reporting_another_version_is_an_error() {
    let bed = Bed::new();
    bed.publish("ragate 9.9.9", &bed.source_hash(), None);
    let (code, log, _) = bed.install(&bed.file_url());
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("expected 'ragate 0.1.0'"), "{log}");
    assert!(!bed.path("root/bin/ragate").exists(), "nothing installed");
}

#[test]
fn no_release_or_other_sources_build_with_cargo_install() {
    let bed = Bed::new();
    let (code, log, cargo) = bed.install(&bed.file_url());
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("no release v0.1.0"), "{log}");
    let expected = format!(
        "install\n--locked\n--features\nnli\n--path\n{}\n--root\n{}\n",
        bed.path("source").display(),
        bed.path("root").display()
    );
    assert_eq!(cargo.as_deref(), Some(expected.as_str()));

    // A release of the same version built from other sources (a pull request changing ragate).
    bed.publish("ragate 0.1.0", "0123456789abcdef", None);
    std::fs::remove_file(bed.path("cargo-argv")).unwrap();
    let (code, log, cargo) = bed.install(&bed.file_url());
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("built from other sources"), "{log}");
    assert_eq!(cargo.as_deref(), Some(expected.as_str()));
    assert!(!bed.path("root/bin/ragate").exists());
}

/// `python3 -m http.server` on a free loopback port, serving `root`; killed on drop.
struct Server(Child, u16);

impl Server {
    fn start(root: &Path) -> Self {
        let mut child = Command::new("python3")
            .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
            .current_dir(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server(child, port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_release_over_http_is_downloaded_and_a_missing_one_falls_back() {
    let bed = Bed::new();
    bed.publish("ragate 0.1.0", &bed.source_hash(), None);
    let server = Server::start(&bed.path("release"));
    let url = format!("http://127.0.0.1:{}", server.1);
    let (code, log, cargo) = bed.install(&url);
    assert_eq!(code, 0, "{log}");
    assert_eq!(cargo, None, "{log}");
    assert_eq!(bed.installed_version().as_deref(), Some("ragate 0.1.0"));

    // The same server without the release: HTTP 404, so cargo builds it.
    std::fs::remove_dir_all(bed.path("root")).unwrap();
    std::fs::remove_dir_all(bed.path(&format!("release/v{VERSION}"))).unwrap();
    let (code, log, cargo) = bed.install(&url);
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("no release v0.1.0"), "{log}");
    assert!(cargo.is_some(), "{log}");
}

#[test]
fn an_unreachable_release_server_is_an_error() {
    let bed = Bed::new();
    // Port 1 on loopback: nothing listens, so the download fails (not a 404).
    let (code, log, cargo) = bed.install("http://127.0.0.1:1");
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("could not download"), "{log}");
    assert_eq!(cargo, None);
}

#[test]
fn a_release_server_that_accepts_and_never_answers_times_out_as_an_error() {
    let bed = Bed::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts every connection and holds it open without reading or answering.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    let (code, log, cargo) = bed.install_with(
        &format!("http://127.0.0.1:{port}"),
        &[("RAGATE_DOWNLOAD_TIMEOUT", "1")],
    );
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("could not download"), "{log}");
    assert!(
        log.contains("timed out") || log.contains("Operation timed out"),
        "{log}"
    );
    assert_eq!(
        cargo, None,
        "a failed download is no reason to build: {log}"
    );
}

#[test]
fn a_download_timeout_that_is_not_whole_seconds_is_an_error() {
    let bed = Bed::new();
    let (code, log, cargo) = bed.install_with(&bed.file_url(), &[("RAGATE_DOWNLOAD_TIMEOUT", "0")]);
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("RAGATE_DOWNLOAD_TIMEOUT is '0'"), "{log}");
    assert_eq!(cargo, None);
}
