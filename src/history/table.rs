//! `ragate history show`: the runs of a tier as a table (time, commit, status, the `all` mean of
//! each gated metric) with a line where the series breaks (config hash, judge or embeddings
//! changed), or as JSON.

use serde_json::json;

use crate::columns;
use crate::history::record::Record;
use crate::history::store::file_name;

/// What goes above a run: the series break between it and the run before, if any.
fn breaks(records: &[Record]) -> Vec<Option<String>> {
    (0..records.len())
        .map(|i| {
            i.checked_sub(1)
                .and_then(|before| records[i].break_from(&records[before]))
        })
        .collect()
}

/// The gated metrics of the records shown, sorted.
fn metric_names(records: &[Record]) -> Vec<String> {
    let mut names: Vec<String> = records
        .iter()
        .flat_map(|r| r.metrics.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The index of the first of the last `last` runs.
fn first_shown(records: &[Record], last: Option<usize>) -> usize {
    last.map_or(0, |n| records.len().saturating_sub(n))
}

/// The table of `records` (oldest first), the last `last` of them when given.
pub fn render_table(tier: &str, records: &[Record], last: Option<usize>) -> String {
    if records.is_empty() {
        return format!(
            "tier {tier}: no runs recorded yet (`ragate history add --tier {tier} --from results.json` adds one)\n"
        );
    }
    let metrics = metric_names(records);
    let start = first_shown(records, last);
    let breaks = breaks(records);
    let mut rows: Vec<Vec<String>> = vec![
        ["time", "commit", "status"]
            .iter()
            .map(ToString::to_string)
            .chain(metrics.iter().map(|m| format!("{m} [all]")))
            .collect(),
    ];
    let mut break_after_row: Vec<(usize, String)> = Vec::new();
    for (i, record) in records.iter().enumerate().skip(start) {
        if let Some(change) = &breaks[i] {
            break_after_row.push((rows.len(), change.clone()));
        }
        let status = serde_json::to_value(record.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let mut row = vec![record.time.clone(), record.short_commit(), status];
        for metric in &metrics {
            let cell = record
                .mean_all(metric)
                .map_or("–".to_string(), |mean| format!("{mean:.4}"));
            let failed = record
                .check_of(metric, "all")
                .is_some_and(|c| c.status == "fail");
            row.push(if failed { format!("{cell} FAIL") } else { cell });
        }
        rows.push(row);
    }
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    if start > 0 {
        out.push_str(&format!("({start} earlier runs not shown)\n"));
    }
    for (index, row) in rows.iter().enumerate() {
        if let Some((_, change)) = break_after_row.iter().find(|(at, _)| *at == index) {
            out.push_str(&format!("---- series break: {change} ----\n"));
        }
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, width))| {
                if c < 3 {
                    columns::left(cell, *width)
                } else {
                    columns::right(cell, *width)
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// `{"tier", "runs": [{"file", "series_break", "record"}]}`, the last `last` runs when given.
pub fn render_json(tier: &str, records: &[Record], last: Option<usize>) -> String {
    let start = first_shown(records, last);
    let breaks = breaks(records);
    let runs: Vec<serde_json::Value> = records
        .iter()
        .enumerate()
        .skip(start)
        .map(|(i, record)| {
            json!({
                "file": file_name(record),
                "series_break": breaks[i],
                "record": record,
            })
        })
        .collect();
    let document = json!({"tier": tier, "earlier_runs_not_shown": start, "runs": runs});
    crate::json_text::document(&document)
}
