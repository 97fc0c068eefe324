//! A tier's queries: its own qrels file, or a seeded, stratified sample of a larger one.

pub(crate) mod sample;

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{Config, Tier, TierSource};
use crate::error::{Error, Result, shorten};
use crate::input::text_file::TextFile;
use crate::input::{self, QrelsFormat, judged_by, qrels::Qrels, queries};
use crate::pipeline::Pipeline;

/// The qrels of a tier and the sha256 of the files they come from.
pub(crate) struct TierQueries {
    pub qrels: Qrels,
    pub file_sha256: String,
    /// Queries of the tier's `queries:` file that no judgment names: not evaluated.
    pub unjudged: usize,
}

/// The tier's queries: its qrels (sampled when the tier is `from:` a larger file) with the texts
/// of its `queries:` file.
pub(crate) fn load(config: &Config, tier: &Tier) -> Result<TierQueries> {
    sample(config, tier, load_source(tier)?)
}

/// The tier's queries from its whole qrels file ([`load_source`]): sampled when the tier is
/// `from:` a larger file, else `whole` as it is.
pub(crate) fn sample(config: &Config, tier: &Tier, whole: TierQueries) -> Result<TierQueries> {
    let TierSource::Sample {
        from,
        size,
        stratify,
        seed,
    } = &tier.source
    else {
        return Ok(whole);
    };
    if let Some(error) = stratify_error(config, tier, &whole.qrels) {
        return Err(error);
    }
    Ok(TierQueries {
        qrels: sample_qrels(from, whole.qrels, *size, stratify.as_deref(), *seed)?,
        ..whole
    })
}

/// How a sampled tier's queries are drawn, for the results' provenance: `40 queries, stratify
/// length, seed 1, stable-v2` (None: the tier's own qrels file). The `from:` file is not named:
/// its bytes are in the qrels hash, and its path differs between machines. A baseline drawn
/// otherwise is another sample ([`crate::baseline::pairing::changes`]).
pub(crate) fn sample_description(tier: &Tier) -> Option<String> {
    let TierSource::Sample {
        size,
        stratify,
        seed,
        ..
    } = &tier.source
    else {
        return None;
    };
    let stratify = stratify
        .as_ref()
        .map(|field| format!(", stratify {field}"))
        .unwrap_or_default();
    Some(format!(
        "{size} queries{stratify}, seed {seed}, {}",
        sample::SAMPLER
    ))
}

/// The tier's whole qrels file (not sampled) in any format the readers know (native JSONL, TREC,
/// TSV, a BEIR folder), with the texts of its `queries:` file joined by qid. The hash covers both
/// files; an unreadable file names the config key that named it.
pub(crate) fn load_source(tier: &Tier) -> Result<TierQueries> {
    let (path, key) = match &tier.source {
        TierSource::Qrels(path) => (path.as_path(), "qrels"),
        TierSource::Sample { from, .. } => (from.as_path(), "from"),
    };
    let named_by = |e: Error, key: &str| e.named_by(&format!("tiers.{}.{key}", tier.name));
    let (mut qrels, mut file_sha256) = if path.is_dir() {
        let qrels = input::load_qrels(path, Some(QrelsFormat::Beir), BEIR_SPLIT, None)?;
        let mut hashes = String::new();
        for file in [
            format!("qrels/{BEIR_SPLIT}.tsv"),
            "queries.jsonl".to_string(),
        ] {
            let file = path.join(file);
            let bytes = std::fs::read(&file).map_err(|e| named_by(Error::io(&file, e), key))?;
            hashes.push_str(&crate::digest::sha256_hex(&bytes));
        }
        (qrels, crate::digest::sha256_hex(hashes.as_bytes()))
    } else {
        let bytes = std::fs::read(path).map_err(|e| named_by(Error::io(path, e), key))?;
        let sha256 = crate::digest::sha256_hex(&bytes);
        let file = TextFile::from_bytes(path, bytes)?;
        let format = input::detect_qrels_format(&file)?;
        let mut qrels = input::read_qrels_file(&file, Some(format))?;
        if format != QrelsFormat::Native {
            attach_sidecar(&mut qrels, path)?;
        }
        refuse_unaccepted_drafts(&qrels, path).map_err(|e| named_by(e, key))?;
        (qrels, sha256)
    };
    let mut unjudged = 0;
    if let Some(queries_path) = &tier.queries {
        let bytes = std::fs::read(queries_path)
            .map_err(|e| named_by(Error::io(queries_path, e), "queries"))?;
        let queries_sha256 = crate::digest::sha256_hex(&bytes);
        let texts = queries::read(&TextFile::from_bytes(queries_path, bytes)?)?;
        unjudged = queries::attach(&mut qrels, texts);
        file_sha256 =
            crate::digest::sha256_hex(format!("{file_sha256}{queries_sha256}").as_bytes());
    }
    Ok(TierQueries {
        qrels,
        file_sha256,
        unjudged,
    })
}

/// Drafted queries (`ragate synth`) that no person accepted (`ragate qrels accept` stamps
/// `drafted_by.accepted_at`) never become a tier: an error naming the first and the count.
fn refuse_unaccepted_drafts(qrels: &Qrels, path: &Path) -> Result<()> {
    let unaccepted: Vec<&str> = qrels
        .queries()
        .iter()
        .filter(|q| {
            q.drafted_by
                .as_ref()
                .is_some_and(|d| d.accepted_at.is_none())
        })
        .map(|q| q.qid.as_str())
        .collect();
    match unaccepted.first() {
        None => Ok(()),
        Some(first) => Err(Error::input(
            path,
            format!(
                "{} drafted quer{} (`ragate synth`), first `{}`, never accepted: review the draft \
                 and add it with `ragate qrels accept DRAFT --tier T` (or --into FILE) instead of \
                 evaluating it as it is",
                unaccepted.len(),
                if unaccepted.len() == 1 { "y" } else { "ies" },
                shorten(first)
            ),
        )),
    }
}

/// The provenance of the model judgments of TREC or TSV qrels at `path`, from their sidecar
/// (`<qrels>.judged_by.jsonl`, written by `ragate qrels apply`), when there is one. An entry for
/// a judgment the qrels do not have is an error naming the sidecar: it would mark nothing.
pub(crate) fn attach_sidecar(qrels: &mut Qrels, path: &Path) -> Result<()> {
    let sidecar = judged_by::sidecar_path(path);
    for ((qid, doc), judgment) in judged_by::read_sidecar(&sidecar)? {
        let judged = qrels
            .position(&qid)
            .filter(|&p| qrels.queries()[p].judgments.get(&doc).is_some());
        let Some(position) = judged else {
            return Err(Error::input(
                &sidecar,
                format!(
                    "`{}` of query `{}` is not judged in {}: expected the provenance of its judgments only",
                    shorten(&doc),
                    shorten(&qid),
                    path.display()
                ),
            ));
        };
        qrels.query_mut(position).judged_by.insert(doc, judgment);
    }
    Ok(())
}

/// The most query fields a message lists.
const LISTED_FIELDS: usize = 10;

/// A config error when the tier's `stratify:` field is one that no query of its `from:` file
/// has (the sample would silently not be stratified), at the key's line and column, with the
/// fields the queries do have and the closest of them.
pub(crate) fn stratify_error(config: &Config, tier: &Tier, whole: &Qrels) -> Option<Error> {
    let TierSource::Sample {
        stratify: Some(field),
        ..
    } = &tier.source
    else {
        return None;
    };
    let fields: std::collections::BTreeSet<&str> = whole
        .queries()
        .iter()
        .flat_map(|q| q.attributes.keys().map(String::as_str))
        .collect();
    if fields.contains(field.as_str()) {
        return None;
    }
    let mut listed: Vec<String> = fields
        .iter()
        .take(LISTED_FIELDS)
        .map(|f| format!("`{}`", shorten(f)))
        .collect();
    if fields.len() > LISTED_FIELDS {
        listed.push(format!("and {} more", fields.len() - LISTED_FIELDS));
    }
    let carried = if listed.is_empty() {
        "its queries carry no field besides qid, query and the judgments".to_string()
    } else {
        format!("the queries carry {}", listed.join(", "))
    };
    let message = format!(
        "no query of {} has a `{}` field, so the sample could not be stratified: expected a \
         field the queries carry ({carried})",
        whole.path().display(),
        shorten(field)
    );
    let error = Error::config(
        &config.path,
        format!("tiers.{}.stratify", tier.name),
        crate::suggest::did_you_mean(message, field, fields.iter().copied()),
    );
    Some(crate::config::locate::locate_in_file(error, &config.path))
}

/// The split a tier reads from a BEIR folder.
pub(crate) const BEIR_SPLIT: &str = "test";

/// The most qids a message lists.
const LISTED_QIDS: usize = 5;

/// The adapter that sends every query's text to the system under test (`command`, `http`), or
/// None when the run is read from a file.
pub(crate) fn text_needed_by(config: &Config) -> Option<&'static str> {
    match config.pipeline.as_ref()? {
        Pipeline::RunFile(_) => None,
        Pipeline::Command(_) => Some("command"),
        Pipeline::Http(_) => Some("http"),
    }
}

/// Every query must have a text when the `adapter` pipeline will be sent it: the error names the
/// first few qids without one, the files and the config key that gives texts.
pub(crate) fn require_texts(
    config: &Config,
    tier: &Tier,
    qrels: &Qrels,
    adapter: &str,
) -> Result<()> {
    let missing: Vec<&str> = qrels
        .queries()
        .iter()
        .filter(|q| q.text.as_deref().is_none_or(|t| t.trim().is_empty()))
        .map(|q| q.qid.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut listed: Vec<String> = missing
        .iter()
        .take(LISTED_QIDS)
        .map(|qid| format!("`{}`", shorten(qid)))
        .collect();
    if missing.len() > LISTED_QIDS {
        listed.push(format!("and {} more", missing.len() - LISTED_QIDS));
    }
    let remedy = match &tier.queries {
        Some(path) => format!(
            "not in {} either: add a line for each (TSV `qid<TAB>text` or JSONL with qid and query)",
            path.display()
        ),
        None => "give the texts with `queries: FILE` in the tier (TSV `qid<TAB>text` or JSONL \
                 with qid and query), or a `query` field in every qrels line"
            .to_string(),
    };
    Err(Error::config(
        &config.path,
        format!("tiers.{}.queries", tier.name),
        format!(
            "{} of {} queries of {} have no text, which the {adapter} pipeline is sent: {}; {remedy}",
            missing.len(),
            qrels.len(),
            qrels.path().display(),
            listed.join(", ")
        ),
    ))
}

/// The line saying how many queries of the tier's `queries:` file have no judgment (None: all do).
pub(crate) fn unjudged_note(tier: &Tier, unjudged: usize) -> Option<String> {
    let path = tier.queries.as_ref().filter(|_| unjudged > 0)?;
    Some(format!(
        "tier `{}`: {unjudged} queries of {} have no judgments in the qrels and are not evaluated",
        tier.name,
        path.display()
    ))
}

/// Picks `size` queries, stably ([`sample`](mod@sample)): each stratum (value of the `stratify`
/// field, `<none>` when absent) gets its share by Webster's method, filled with its queries of
/// lowest keyed hash; the result keeps file order.
fn sample_qrels(
    path: &Path,
    qrels: Qrels,
    size: usize,
    stratify: Option<&str>,
    seed: u64,
) -> Result<Qrels> {
    if size > qrels.len() {
        return Err(Error::input(
            path,
            format!(
                "a sample of {size} queries was asked for, but the file has {}: expected sample <= {}",
                qrels.len(),
                qrels.len()
            ),
        ));
    }
    let mut strata: BTreeMap<String, Vec<(usize, &str)>> = BTreeMap::new();
    for (position, query) in qrels.queries().iter().enumerate() {
        let key = stratify
            .and_then(|field| query.attributes.get(field))
            .map_or(sample::NO_STRATUM, String::as_str);
        strata
            .entry(key.to_string())
            .or_default()
            .push((position, query.qid.as_str()));
    }
    let chosen = sample::positions(&strata, size, seed);
    Ok(qrels.select(&chosen))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qrels(n: usize) -> Qrels {
        let mut text = String::new();
        for i in 0..n {
            let class = if i % 4 == 0 { "rare" } else { "common" };
            text.push_str(&format!("{{\"qid\":\"q{i:03}\",\"query\":\"x\",\"gold_doc_ids\":[\"d\"],\"class\":\"{class}\"}}\n"));
        }
        input::native_qrels::read(&TextFile::from_bytes("q.jsonl", text.into_bytes()).unwrap())
            .unwrap()
    }

    fn qids(q: &Qrels) -> Vec<String> {
        q.queries().iter().map(|q| q.qid.clone()).collect()
    }

    #[test]
    fn stratified_sample_is_proportional_seeded_and_in_file_order() {
        let sample = sample_qrels(Path::new("q"), qrels(100), 20, Some("class"), 7).unwrap();
        assert_eq!(sample.len(), 20);
        let rare = sample
            .queries()
            .iter()
            .filter(|q| q.attributes["class"] == "rare")
            .count();
        assert_eq!(rare, 5, "25% of the file, 25% of the sample");
        let ids = qids(&sample);
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted, "file order kept");
        assert_eq!(
            ids,
            qids(&sample_qrels(Path::new("q"), qrels(100), 20, Some("class"), 7).unwrap())
        );
        assert_ne!(
            ids,
            qids(&sample_qrels(Path::new("q"), qrels(100), 20, Some("class"), 8).unwrap())
        );
        // Pinned: the same file and seed pick these queries after any dependency upgrade.
        assert_eq!(ids, PINNED_SAMPLE);
        assert!(
            sample_qrels(Path::new("q"), qrels(10), 11, None, 1)
                .unwrap_err()
                .to_string()
                .contains("expected sample <= 10")
        );
    }

    /// Computed outside ragate (Python's hashlib: each stratum's 5 and 15 qids of lowest
    /// `sha256(b"ragate-sample-v2\0" + b"7" + b"\0" + qid)[:8]`, big-endian).
    const PINNED_SAMPLE: [&str; 20] = [
        "q000", "q008", "q010", "q012", "q017", "q018", "q021", "q025", "q027", "q028", "q034",
        "q037", "q038", "q039", "q046", "q061", "q084", "q085", "q091", "q097",
    ];
}

#[cfg(test)]
mod source_tests {
    use super::*;

    /// A config in `dir` whose tier `t` reads `tier` (YAML flow mapping entries) with `pipeline`.
    fn config(dir: &Path, tier: &str, pipeline: &str) -> Config {
        let text = format!(
            "version: 1\nmetrics: [mrr]\ngate: {{ rules: [ {{ metric: mrr, max_drop: 0.1 }} ] }}\npipeline: {pipeline}\ntiers:\n  t: {{ {tier}, baseline: b.json }}\n"
        );
        std::fs::write(dir.join("eval-config.yaml"), text).unwrap();
        crate::config::load(&dir.join("eval-config.yaml")).unwrap()
    }

    #[test]
    fn tsv_qrels_take_their_texts_from_the_queries_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("qrels.tsv"), "1\td1\t1\n2\td2\t2\n").unwrap();
        std::fs::write(
            dir.path().join("queries.tsv"),
            "2\tsecond\n1\tfirst\n3\tunjudged\n",
        )
        .unwrap();
        let config = config(
            dir.path(),
            "qrels: qrels.tsv, queries: queries.tsv",
            "{ command: [x] }",
        );
        let tier = &config.tiers["t"];
        let loaded = load(&config, tier).unwrap();
        let texts: Vec<_> = loaded
            .qrels
            .queries()
            .iter()
            .map(|q| q.text.as_deref())
            .collect();
        assert_eq!(texts, [Some("first"), Some("second")]);
        assert_eq!(loaded.unjudged, 1);
        assert!(
            unjudged_note(tier, loaded.unjudged)
                .unwrap()
                .ends_with("queries.tsv have no judgments in the qrels and are not evaluated")
        );
        require_texts(&config, tier, &loaded.qrels, "command").unwrap();
        let qrels_only = load_source(&config.tiers["t"]).unwrap();
        assert_ne!(
            qrels_only.file_sha256,
            crate::digest::sha256_hex(b"1\td1\t1\n2\td2\t2\n"),
            "the hash covers the queries file too"
        );
    }

    #[test]
    fn a_query_without_text_is_named_with_the_files_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let mut qrels = String::new();
        for qid in 1..=7 {
            qrels.push_str(&format!("{qid} 0 d 1\n"));
        }
        std::fs::write(dir.path().join("qrels.txt"), qrels).unwrap();
        std::fs::write(dir.path().join("queries.tsv"), "1\tone\n").unwrap();
        let config = config(
            dir.path(),
            "qrels: qrels.txt, queries: queries.tsv",
            "{ http: { url: \"http://127.0.0.1:9\" } }",
        );
        let tier = &config.tiers["t"];
        let qrels = load(&config, tier).unwrap().qrels;
        let err = require_texts(&config, tier, &qrels, "http")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("eval-config.yaml: tiers.t.queries: 6 of 7 queries of "),
            "{err}"
        );
        assert!(
            err.contains("qrels.txt have no text, which the http pipeline is sent: `2`, `3`, `4`, `5`, `6`, and 1 more; not in "),
            "{err}"
        );
        assert!(
            err.contains("queries.tsv either: add a line for each"),
            "{err}"
        );
    }

    #[test]
    fn a_run_file_pipeline_needs_no_text_and_beir_folders_are_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("beir/qrels")).unwrap();
        std::fs::write(dir.path().join("beir/qrels/test.tsv"), "q1\td1\t1\n").unwrap();
        std::fs::write(
            dir.path().join("beir/queries.jsonl"),
            "{\"_id\":\"q1\",\"text\":\"hello\"}\n",
        )
        .unwrap();
        let config = config(dir.path(), "qrels: beir", "{ run_file: r.jsonl }");
        assert_eq!(text_needed_by(&config), None);
        let loaded = load(&config, &config.tiers["t"]).unwrap();
        assert_eq!(loaded.qrels.queries()[0].text.as_deref(), Some("hello"));
    }

    #[test]
    fn an_unreadable_queries_file_names_the_tier_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("qrels.tsv"), "1\td1\t1\n").unwrap();
        let config = config(
            dir.path(),
            "qrels: qrels.tsv, queries: missing.tsv",
            "{ command: [x] }",
        );
        let err = load(&config, &config.tiers["t"]).err().unwrap().to_string();
        assert!(
            err.ends_with("missing.tsv (named by tiers.t.queries)"),
            "{err}"
        );
    }
}
