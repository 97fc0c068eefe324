//! The Markdown summary of a gate run (minimal placeholder).

use crate::gate::GateReport;

pub fn render(report: &GateReport) -> String {
    let mut out = format!("# ragate: tier {}\n\n", report.tier);
    for outcome in &report.outcomes {
        out.push_str(&format!("- {:?}: {}\n", outcome.status, outcome.verdict));
    }
    out
}
