//! Reading the per-query values of bench/nfcorpus_runs.sh: the `<metric>.tsv` matrices or the
//! per-run files, without the runs whose pipeline died part-way.

use std::collections::BTreeMap;
use std::path::Path;

use ragate::stats;

use super::METRICS;

/// The runs whose recall@5 mean is within 10% of the median run's: a run whose pipeline died
/// part-way scores its missing queries 0 (one of the first 88 runs has a recall@5 of 0.049 where
/// the others have 0.107-0.111), which is not run-to-run noise.
pub(super) fn without_broken_runs(values: Vec<Vec<Vec<f64>>>) -> Vec<Vec<Vec<f64>>> {
    let means: Vec<f64> = values[0].iter().map(|run| stats::mean(run)).collect();
    let mut sorted = means.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let kept: Vec<bool> = means
        .iter()
        .map(|m| (m - median).abs() <= 0.1 * median)
        .collect();
    let dropped = kept.iter().filter(|k| !**k).count();
    if dropped > 0 {
        println!(
            "left out {dropped} broken run(s): recall@5 mean off the median {median:.4} by more than 10%"
        );
    }
    values
        .into_iter()
        .map(|metric| {
            (metric.into_iter().zip(&kept))
                .filter(|(_, k)| **k)
                .map(|(run, _)| run)
                .collect()
        })
        .collect()
}

/// `<metric>.tsv` of bench/nfcorpus_runs.sh: a header, then a seed and the values per line.
pub(super) fn read_matrix(path: &Path) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .map(|line| {
            line.split('\t')
                .skip(1)
                .map(|v| v.parse().expect("a number"))
                .collect()
        })
        .collect()
}

/// The per-run files (`metric<TAB>qid<TAB>value`), qids sorted, as `[metric][run][query]`.
pub(super) fn read_run_files(dir: &Path) -> Vec<Vec<Vec<f64>>> {
    let mut files: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "tsv"))
        .filter_map(|path| Some((path.file_stem()?.to_str()?.parse().ok()?, path)))
        .collect();
    files.sort();
    // `RAGATE_RUN_SEEDS=K` uses seeds 1..=K only, so that figures can be compared while more runs
    // are being written.
    if let Some(k) = std::env::var("RAGATE_RUN_SEEDS")
        .ok()
        .and_then(|k| k.parse().ok())
    {
        files.retain(|(seed, _)| *seed <= k);
    }
    let files: Vec<std::path::PathBuf> = files.into_iter().map(|(_, path)| path).collect();
    let mut values: Vec<Vec<Vec<f64>>> = vec![Vec::new(); METRICS.len()];
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let mut run: Vec<BTreeMap<&str, f64>> = vec![BTreeMap::new(); METRICS.len()];
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            let metric = METRICS.iter().position(|m| *m == fields[0]);
            if let (Some(metric), true) = (metric, fields.len() == 3 && fields[1] != "all") {
                run[metric].insert(fields[1], fields[2].parse().expect("a number"));
            }
        }
        for (metric, by_qid) in run.into_iter().enumerate() {
            values[metric].push(by_qid.into_values().collect());
        }
    }
    values
}
