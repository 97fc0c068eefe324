//! The optional cargo features (`llm`, `cache`, `nli`) and the error a build without one gives when a
//! config asks for what it provides.

/// The message for `what`, which needs `feature`, in a build compiled without it; `otherwise`
/// is the way out that needs no rebuild (starting with "or ...").
pub(crate) fn missing(feature: &str, what: &str, otherwise: &str) -> String {
    format!(
        "{what} needs ragate's `{feature}` cargo feature, which this build was compiled \
         without: rebuild with `--features {feature}` (it is on by default), {otherwise}"
    )
}

#[cfg(test)]
mod tests {
    //! Each test checks both builds: with the feature the config is accepted (or the cache
    //! opened); without it, the same request is an error naming the feature. `.ci/run` runs
    //! them in a build without default features too.

    use std::path::Path;

    use crate::config::{self, CacheMode};
    use crate::error::Error;
    use crate::judge::cache::JudgeCache;

    const BASE: &str = "version: 1\nmetrics: [mrr, faithfulness]\n\
                        tiers: { smoke: { qrels: q.jsonl, baseline: b.json } }\n\
                        gate: { rules: [ { metric: mrr, max_drop: 0.1 } ] }\n";

    fn load(dir: &Path, extra: &str) -> crate::error::Result<config::Config> {
        let path = dir.join("eval-config.yaml");
        std::fs::write(&path, format!("{BASE}{extra}")).unwrap();
        config::load(&path)
    }

    /// Asserts that `result` is a config error at `key` naming `feature`, when the build lacks
    /// it, and a success when it has it.
    fn check<T: std::fmt::Debug>(
        result: crate::error::Result<T>,
        on: bool,
        feature: &str,
        key: &str,
    ) {
        if on {
            result.unwrap();
            return;
        }
        let error = result.unwrap_err();
        let text = error.to_string();
        assert!(
            matches!(&error, Error::Config { key: k, .. } if k == key),
            "{text}"
        );
        assert!(
            text.contains(&format!("ragate's `{feature}` cargo feature"))
                && text.contains(&format!("--features {feature}")),
            "{text}"
        );
    }

    #[test]
    fn an_openai_judge_needs_the_llm_feature() {
        let dir = tempfile::tempdir().unwrap();
        let judges = "judges: { default: { kind: openai, base_url: \"http://h/v1\", model: m } }\n";
        let loaded = load(dir.path(), judges);
        check(loaded, cfg!(feature = "llm"), "llm", "judges.default.kind");
    }

    #[test]
    fn an_nli_judge_needs_the_nli_feature() {
        let dir = tempfile::tempdir().unwrap();
        let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nli/tiny");
        let judges = format!(
            "judges: {{ nli: {{ kind: nli, model: \"{}\" }} }}\n",
            model.display()
        );
        let loaded = load(dir.path(), &judges);
        check(loaded, cfg!(feature = "nli"), "nli", "judges.nli.kind");
    }

    #[test]
    fn an_embeddings_endpoint_needs_the_llm_feature() {
        let dir = tempfile::tempdir().unwrap();
        let extra = "embeddings: { base_url: \"http://h/v1\", model: m }\n";
        let loaded = load(dir.path(), extra);
        check(loaded, cfg!(feature = "llm"), "llm", "embeddings");
    }

    #[test]
    fn the_http_pipeline_needs_the_llm_feature() {
        let dir = tempfile::tempdir().unwrap();
        let loaded = load(
            dir.path(),
            "pipeline: { http: { url: \"http://h/run\" } }\n",
        );
        check(loaded, cfg!(feature = "llm"), "llm", "pipeline.http");
    }

    #[test]
    fn opening_the_judge_cache_needs_the_cache_feature() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache/judge-cache.sqlite");
        for mode in [CacheMode::ReadWrite, CacheMode::Replay] {
            let opened = JudgeCache::open(&path, mode);
            if cfg!(feature = "cache") {
                // Replay needs the file read-write mode created just before.
                opened.unwrap();
                continue;
            }
            let text = opened.unwrap_err().to_string();
            assert!(
                text.starts_with(&path.display().to_string())
                    && text.contains("ragate's `cache` cargo feature")
                    && text.contains("set `cache: {mode: off}`"),
                "{text}"
            );
            assert!(!dir.path().join("cache").exists(), "nothing is created");
        }
        // `off` touches no file and needs no SQLite.
        let off = JudgeCache::open(&path, CacheMode::Off).unwrap();
        assert_eq!(off.stats().writes, 0);
    }
}
