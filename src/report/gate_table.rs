//! The compact table `ragate gate` prints on stdout (minimal placeholder).

use crate::gate::GateReport;

pub fn render(report: &GateReport) -> String {
    let mut out = String::new();
    for outcome in &report.outcomes {
        out.push_str(&format!("{:?}\t{}\n", outcome.status, outcome.verdict));
    }
    out
}
