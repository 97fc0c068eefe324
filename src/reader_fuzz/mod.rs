//! Property tests of every reader (issue 10, "Fuzzing"): arbitrary bytes and structure-aware
//! mutations of valid files (tests/fixtures/fuzz/seeds) must never panic, and any error must
//! name the file. The corpus under tests/fixtures/fuzz/<reader>/ keeps the interesting cases.
//!
//! `RAGATE_FUZZ_CASES` sets the cases per reader and strategy (default [`DEFAULT_CASES`], kept
//! small for CI); `RAGATE_FUZZ_SEED` changes the (otherwise fixed) random seed. See
//! docs/fuzzing.md for the long run.

mod mutate;

use std::cell::Cell;
use std::path::{Path, PathBuf};

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};

use crate::error::Result;
use crate::input::trec_run::ReadOptions;
use crate::input::{self, QrelsFormat, RunFormat, text_file::TextFile};

/// Cases per reader and strategy when `RAGATE_FUZZ_CASES` is not set.
const DEFAULT_CASES: u32 = 150;

/// One reader under test: where the fuzzed bytes go inside a case directory, which valid files
/// they are mutated from, the other files the reader needs, and how to read the case.
struct Reader {
    name: &'static str,
    /// Path of the fuzzed file inside the case directory.
    target: &'static str,
    /// Valid files (under tests/fixtures/fuzz/seeds) to mutate.
    seeds: &'static [&'static str],
    /// Valid files copied into the case directory first: (seed, path in the case directory).
    companions: &'static [(&'static str, &'static str)],
    read: fn(&Path) -> Result<()>,
}

fn qrels(path: &Path, format: Option<QrelsFormat>, queries: Option<&Path>) -> Result<()> {
    input::load_qrels(path, format, "test", queries).map(drop)
}

fn text(path: &Path) -> Result<TextFile> {
    TextFile::read(path)
}

fn read_trec_run(path: &Path) -> Result<()> {
    if input::detect_run_format(path)? == RunFormat::Native {
        return input::run::read(&text(path)?).map(drop);
    }
    // Tiny blocks and buckets, so that short inputs cross every boundary of the reader.
    let options = ReadOptions {
        threads: 2,
        block_bytes: 64,
        blocks_in_flight: 2,
        bucket_bytes: 128,
        memory_budget: 256,
    };
    input::trec_run::for_each_query(path, &options, |_, entries| {
        input::trec_run::in_trec_order(entries).take(10).count()
    })
    .map(drop)
}

const READERS: &[Reader] = &[
    Reader {
        name: "native_qrels",
        target: "qrels.jsonl",
        seeds: &["qrels.jsonl"],
        companions: &[],
        read: |dir| qrels(&dir.join("qrels.jsonl"), None, None),
    },
    Reader {
        name: "trec_qrels",
        target: "qrels.trec",
        seeds: &["qrels.trec"],
        companions: &[],
        read: |dir| qrels(&dir.join("qrels.trec"), Some(QrelsFormat::Trec), None),
    },
    Reader {
        name: "tsv_qrels",
        target: "qrels.tsv",
        seeds: &["qrels.tsv"],
        companions: &[],
        read: |dir| qrels(&dir.join("qrels.tsv"), Some(QrelsFormat::Tsv), None),
    },
    Reader {
        name: "detected_qrels",
        target: "qrels.txt",
        seeds: &["qrels.jsonl", "qrels.trec", "qrels.tsv"],
        companions: &[],
        read: |dir| qrels(&dir.join("qrels.txt"), None, None),
    },
    Reader {
        name: "queries",
        target: "queries.txt",
        seeds: &["queries.tsv", "queries.jsonl"],
        companions: &[("qrels.trec", "qrels.trec")],
        read: |dir| {
            let queries = dir.join("queries.txt");
            qrels(&dir.join("qrels.trec"), None, Some(&queries))
        },
    },
    Reader {
        name: "beir_qrels",
        target: "beir/qrels/test.tsv",
        seeds: &["beir/qrels/test.tsv"],
        companions: &[
            ("beir/queries.jsonl", "beir/queries.jsonl"),
            ("beir/corpus.jsonl", "beir/corpus.jsonl"),
        ],
        read: read_beir,
    },
    Reader {
        name: "beir_queries",
        target: "beir/queries.jsonl",
        seeds: &["beir/queries.jsonl"],
        companions: &[
            ("beir/qrels/test.tsv", "beir/qrels/test.tsv"),
            ("beir/corpus.jsonl", "beir/corpus.jsonl"),
        ],
        read: read_beir,
    },
    Reader {
        name: "beir_corpus",
        target: "beir/corpus.jsonl",
        seeds: &["beir/corpus.jsonl"],
        companions: &[
            ("beir/qrels/test.tsv", "beir/qrels/test.tsv"),
            ("beir/queries.jsonl", "beir/queries.jsonl"),
        ],
        read: read_beir,
    },
    Reader {
        name: "corpus",
        target: "corpus.jsonl",
        seeds: &["corpus.jsonl"],
        companions: &[],
        read: |dir| input::corpus::read_optional(Some(&dir.join("corpus.jsonl"))).map(drop),
    },
    Reader {
        name: "native_run",
        target: "run.jsonl",
        seeds: &["run.jsonl"],
        companions: &[],
        read: |dir| input::run::read(&text(&dir.join("run.jsonl"))?).map(drop),
    },
    Reader {
        name: "trec_run",
        target: "run.txt",
        seeds: &["run.trec", "run.jsonl"],
        companions: &[],
        read: |dir| read_trec_run(&dir.join("run.txt")),
    },
    Reader {
        name: "labels",
        target: "labels.jsonl",
        seeds: &["labels.jsonl"],
        companions: &[],
        read: |dir| {
            input::labels::read(
                &text(&dir.join("labels.jsonl"))?,
                crate::metrics::labelled::check_label_metric,
            )
            .map(drop)
        },
    },
    Reader {
        name: "results",
        target: "results.json",
        seeds: &["results.json"],
        companions: &[],
        read: |dir| {
            crate::baseline::store::read(&dir.join("results.json"), "run `ragate gate`").map(drop)
        },
    },
    Reader {
        name: "shard",
        target: "s1/shard.json",
        seeds: &["shard.json"],
        companions: &[],
        read: |dir| crate::commands::merge::read_shard(&dir.join("s1")).map(drop),
    },
    Reader {
        name: "config",
        target: "ragate.yaml",
        seeds: &["config.yaml"],
        companions: &[],
        read: |dir| crate::config::load(&dir.join("ragate.yaml")).map(drop),
    },
    Reader {
        name: "embeddings",
        target: "embeddings.jsonl",
        seeds: &["embeddings.jsonl"],
        companions: &[],
        read: |dir| crate::baseline::embeddings::read(&dir.join("embeddings.jsonl")).map(drop),
    },
];

fn read_beir(dir: &Path) -> Result<()> {
    let folder = dir.join("beir");
    qrels(&folder, None, None)?;
    input::beir::read_corpus(&folder).map(drop)
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz")
}

fn reader(name: &str) -> &'static Reader {
    READERS
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no reader {name}"))
}

/// A case directory holding the reader's companion files; the fuzzed file is written per case.
fn case_dir(reader: &Reader) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join(reader.target);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    for (seed, path) in reader.companions {
        let to = dir.path().join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixtures().join("seeds").join(seed), to).unwrap();
    }
    dir
}

/// Writes `bytes` as the reader's file in `dir` and reads it: an error must name the file.
/// Returns whether the reader accepted the input.
fn check(reader: &Reader, dir: &Path, bytes: &[u8]) -> std::result::Result<bool, String> {
    let target = dir.join(reader.target);
    std::fs::write(&target, bytes).unwrap();
    match (reader.read)(dir) {
        Ok(()) => Ok(true),
        Err(error) => {
            let message = error.to_string();
            let named = target.display().to_string();
            if message.contains(&named) {
                Ok(false)
            } else {
                Err(format!("the error does not name {named}: {message}"))
            }
        }
    }
}

fn config() -> Config {
    let cases = std::env::var("RAGATE_FUZZ_CASES")
        .map(|v| v.parse().expect("RAGATE_FUZZ_CASES is a number of cases"))
        .unwrap_or(DEFAULT_CASES);
    let seed = std::env::var("RAGATE_FUZZ_SEED")
        .map(|v| v.parse().expect("RAGATE_FUZZ_SEED is a u64"))
        .unwrap_or(10);
    Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 2000,
        ..Config::default()
    }
}

/// Runs `strategy` against `reader`; a failure saves the shrunk input beside the temporary
/// directory (to add to the corpus) and fails the test naming it.
fn fuzz(reader: &Reader, strategy: impl Strategy<Value = Vec<u8>>) {
    let dir = case_dir(reader);
    let mut runner = TestRunner::new(config());
    let (cases, accepted) = (Cell::new(0u64), Cell::new(0u64));
    let outcome = runner.run(&strategy, |bytes| {
        let ok = check(reader, dir.path(), &bytes).map_err(TestCaseError::fail)?;
        cases.set(cases.get() + 1);
        accepted.set(accepted.get() + u64::from(ok));
        Ok(())
    });
    match outcome {
        // Shown with --nocapture: how many inputs got past the reader's checks.
        Ok(()) => println!(
            "reader {}: {} cases, {} read without error",
            reader.name,
            cases.get(),
            accepted.get()
        ),
        Err(TestError::Fail(reason, bytes)) => {
            let saved = std::env::temp_dir().join(format!(
                "ragate-fuzz-{}-{}",
                reader.name,
                crate::digest::sha256_hex(&bytes)
            ));
            std::fs::write(&saved, &bytes).unwrap();
            panic!(
                "reader {}: {reason}; the input is saved as {}",
                reader.name,
                saved.display()
            );
        }
        Err(TestError::Abort(reason)) => panic!("reader {}: aborted: {reason}", reader.name),
    }
}

fn seeds(reader: &Reader) -> Vec<Vec<u8>> {
    reader
        .seeds
        .iter()
        .map(|seed| std::fs::read(fixtures().join("seeds").join(seed)).unwrap())
        .collect()
}

macro_rules! fuzz_tests {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                use super::*;

                #[test]
                fn the_valid_seeds_are_read() {
                    let reader = reader(stringify!($name));
                    let dir = case_dir(reader);
                    for seed in seeds(reader) {
                        std::fs::write(dir.path().join(reader.target), &seed).unwrap();
                        if let Err(e) = (reader.read)(dir.path()) {
                            panic!("seed of {}: {e}", reader.name);
                        }
                    }
                }

                #[test]
                fn arbitrary_bytes_never_panic_and_errors_name_the_file() {
                    fuzz(reader(stringify!($name)), mutate::arbitrary());
                }

                #[test]
                fn mutated_files_never_panic_and_errors_name_the_file() {
                    let reader = reader(stringify!($name));
                    fuzz(reader, mutate::mutated(seeds(reader)));
                }
            }
        )*
    };
}

fuzz_tests!(
    native_qrels,
    trec_qrels,
    tsv_qrels,
    detected_qrels,
    queries,
    beir_qrels,
    beir_queries,
    beir_corpus,
    corpus,
    native_run,
    trec_run,
    labels,
    results,
    shard,
    config,
    embeddings,
);

/// Every file of the corpus (tests/fixtures/fuzz/<reader>/) is read without a panic, and an
/// error names the file.
#[test]
fn the_corpus_never_panics_and_errors_name_the_file() {
    let mut count = 0;
    for reader in READERS {
        let Ok(entries) = std::fs::read_dir(fixtures().join(reader.name)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        let dir = case_dir(reader);
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| check(reader, dir.path(), &bytes));
            match outcome {
                Ok(Ok(_)) => count += 1,
                Ok(Err(message)) => panic!("{}: {message}", file.display()),
                Err(_) => panic!("{}: the reader {} panicked", file.display(), reader.name),
            }
        }
    }
    assert!(count > 0, "the corpus is empty");
}

/// The harness itself fails on what it looks for: an error that names another file, and a panic.
mod harness {
    use super::*;
    use crate::error::Error;

    const UNNAMED: Reader = Reader {
        name: "unnamed",
        target: "x.txt",
        seeds: &[],
        companions: &[],
        read: |_| Err(Error::Usage("no file named".into())),
    };

    const PANICS: Reader = Reader {
        name: "panics",
        target: "x.txt",
        seeds: &[],
        companions: &[],
        read: |dir| {
            let bytes = std::fs::read(dir.join("x.txt")).unwrap();
            assert!(!bytes.contains(&0), "a NUL byte");
            Ok(())
        },
    };

    #[test]
    fn an_error_that_does_not_name_the_file_fails_the_check() {
        let dir = case_dir(&UNNAMED);
        let message = check(&UNNAMED, dir.path(), b"x").unwrap_err();
        assert!(message.contains("does not name"), "{message}");
    }

    #[test]
    #[should_panic(expected = "reader panics")]
    fn a_panicking_reader_fails_the_fuzz_run() {
        fuzz(&PANICS, mutate::arbitrary());
    }
}
