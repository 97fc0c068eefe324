//! The alias table of docs/metrics.md, checked against [`ALIASES`]: docs and code cannot drift.

use std::collections::BTreeSet;

use super::*;
use crate::metrics::metric::Metric;

const DOCS: &str = include_str!("../../../docs/metrics.md");

/// The table's rows, as cells.
fn rows() -> Vec<Vec<&'static str>> {
    let section = DOCS
        .split("\n## Other tools' names\n")
        .nth(1)
        .expect("docs/metrics.md has the section");
    section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| line.trim_matches('|').split('|').map(str::trim).collect())
        .collect()
}

/// The names in backticks of a cell, each with whether a † follows it.
fn names(cell: &str) -> Vec<(&str, bool)> {
    let parts: Vec<&str> = cell.split('`').collect();
    (1..parts.len())
        .step_by(2)
        .map(|i| {
            let dagger = parts.get(i + 1).is_some_and(|after| after.starts_with('†'));
            (parts[i], dagger)
        })
        .collect()
}

/// `P@k` as `P@10`, `ndcg_cut.k` as `ndcg_cut.10`.
fn at_ten(name: &str) -> String {
    for separator in ["@k", "_k", ".k"] {
        if let Some(base) = name.strip_suffix(separator) {
            return format!("{base}{}10", &separator[..1]);
        }
    }
    name.to_string()
}

/// The base of a documented name: `ndcg_cut_k` → `ndcg_cut`.
fn base(name: &str) -> &str {
    ["@k", "_k", ".k"]
        .iter()
        .find_map(|separator| name.strip_suffix(separator))
        .unwrap_or(name)
}

#[test]
fn every_documented_alias_reads_as_documented() {
    let rows = rows();
    assert!(rows.len() >= 15, "{rows:?}");
    for row in rows {
        let [ours, ir_measures, trec_eval, _convention] = row[..] else {
            panic!("4 cells: {row:?}");
        };
        let aliases: Vec<(&str, bool)> = names(ir_measures)
            .into_iter()
            .chain(names(trec_eval))
            .collect();
        if ours.starts_with('—') {
            for (alias, _) in &aliases {
                let message = at_ten(alias).parse::<Metric>().unwrap_err().to_string();
                assert!(message.contains("has no ragate metric"), "{message}");
                match names(ours).first() {
                    Some((closest, _)) => assert!(
                        message.contains(&format!("the closest is `{closest}`")),
                        "{message}"
                    ),
                    None => assert!(!message.contains("closest"), "{message}"),
                }
            }
            continue;
        }
        let ours = at_ten(names(ours)[0].0);
        for (alias, output_only) in &aliases {
            let read = at_ten(alias).parse::<Metric>().map(|m| m.to_string());
            if *output_only {
                assert_ne!(read, Ok(ours.clone()), "{alias} is ragate's own name");
            } else {
                assert_eq!(read, Ok(ours.clone()), "{alias}");
            }
        }
        let printed = trec_eval_name(ours.parse().unwrap()).map(|(_, name)| name);
        let documented = names(trec_eval).first().map(|(name, _)| at_ten(name));
        assert_eq!(printed, documented, "trec_eval's name of {ours}");
    }
}

#[test]
fn every_alias_is_documented() {
    let mut documented = BTreeSet::new();
    for row in rows() {
        for (alias, _) in names(row[1]) {
            documented.insert(("ir_measures", base(alias)));
        }
        for (alias, _) in names(row[2]) {
            documented.insert(("trec_eval", base(alias)));
        }
    }
    let coded: BTreeSet<(&str, &str)> = ALIASES
        .iter()
        .map(|alias| {
            let tool = match alias.tool {
                Tool::IrMeasures => "ir_measures",
                Tool::TrecEval => "trec_eval",
            };
            (tool, alias.name)
        })
        .collect();
    assert_eq!(documented, coded);
}
