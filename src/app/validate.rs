//! `ragate validate`: checks the config, every tier's qrels and baseline, and lints the qrels.

use std::collections::BTreeMap;

use crate::app::write_stdout;
use crate::baseline::store;
use crate::cli::ValidateArgs;
use crate::config::{self, TierSource};
use crate::error::Result;
use crate::exit_code;
use crate::gate::decision;
use crate::input::{self, corpus};
use crate::suggest;

pub fn run(args: ValidateArgs) -> Result<i32> {
    let config = config::load(&args.config)?;
    let corpus = corpus::read_optional(config.corpus.as_deref())?;
    let mut problems: Vec<String> = Vec::new();
    let mut lints: Vec<String> = Vec::new();
    for tier in config.tiers.values() {
        let qrels_path = match &tier.source {
            TierSource::Qrels(path) => path,
            TierSource::Sample { from, .. } => from,
        };
        let qrels = match input::load_qrels(qrels_path, None, "test", None) {
            Ok(qrels) => qrels,
            Err(error) => {
                problems.push(format!("tier `{}`: {error}", tier.name));
                continue;
            }
        };
        for field in &config.slices {
            if !qrels
                .queries()
                .iter()
                .any(|q| q.attributes.contains_key(field))
            {
                problems.push(format!(
                    "tier `{}`: no query has the slice field `{field}`",
                    tier.name
                ));
            }
        }
        let empty: Vec<&str> = qrels
            .queries()
            .iter()
            .filter(|q| q.num_relevant() == 0)
            .map(|q| q.qid.as_str())
            .collect();
        if !empty.is_empty() {
            lints.push(format!(
                "tier `{}`: {} queries have no relevant doc and will be excluded, the first: `{}`",
                tier.name,
                empty.len(),
                empty[0]
            ));
        }
        if let Some(corpus) = &corpus {
            let missing: Vec<String> = qrels
                .queries()
                .iter()
                .flat_map(|q| {
                    q.judgments
                        .iter()
                        .filter(|(doc, j)| j.relevant && corpus.get(doc).is_none())
                        .map(move |(doc, _)| format!("{}/{doc}", q.qid))
                })
                .collect();
            if let Some(first) = missing.first() {
                lints.push(format!(
                    "tier `{}`: {} gold docs are not in the corpus, the first: {first}",
                    tier.name,
                    missing.len()
                ));
            }
        }
        let mut sizes: BTreeMap<String, usize> = BTreeMap::new();
        for query in qrels.queries() {
            for field in &config.slices {
                if let Some(value) = query.attributes.get(field) {
                    *sizes.entry(format!("{field}={value}")).or_default() += 1;
                }
            }
        }
        for rule in &tier.gate.rules {
            let Some(value) = &rule.slice else { continue };
            let named = value.to_string();
            if !sizes.contains_key(&named) {
                problems.push(suggest::did_you_mean(
                    format!(
                        "tier `{}`: the rule for {} names {named}, which no query has (the slice values are {})",
                        tier.name,
                        rule.metric,
                        sizes.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                    &named,
                    sizes.keys().map(String::as_str),
                ));
            }
        }
        for (slice, size) in sizes.iter().filter(|(_, n)| **n < tier.gate.min_queries) {
            lints.push(format!(
                "tier `{}`: slice {slice} has {size} queries, fewer than min_queries {}: its checks will be skipped",
                tier.name, tier.gate.min_queries
            ));
        }
        match store::read(
            &tier.baseline,
            &format!(
                "run `ragate gate --tier {0}` and `ragate baseline accept --tier {0}`",
                tier.name
            ),
        ) {
            Err(error) => problems.push(format!("tier `{}`: {error}", tier.name)),
            Ok(baseline) => {
                if let Err(error) =
                    decision::check_baseline_tier(&baseline, &tier.name, &tier.baseline)
                {
                    problems.push(format!("tier `{}`: {error}", tier.name));
                }
            }
        }
        for notice in &tier.gate.notices {
            if !lints.contains(notice) {
                lints.push(notice.clone());
            }
        }
    }
    let mut out = String::new();
    for lint in &lints {
        out.push_str(&format!("warning: {lint}\n"));
    }
    for problem in &problems {
        out.push_str(&format!("error: {problem}\n"));
    }
    out.push_str(&format!(
        "{}: {} tiers, {} errors, {} warnings\n",
        config.path.display(),
        config.tiers.len(),
        problems.len(),
        lints.len()
    ));
    write_stdout(&out)?;
    Ok(if problems.is_empty() {
        exit_code::SUCCESS
    } else {
        exit_code::ERROR
    })
}
