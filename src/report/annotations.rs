//! GitHub Actions `::error` annotations for failing checks (minimal placeholder).

use crate::gate::GateReport;
use crate::gate::verdict::CheckStatus;

pub fn render(report: &GateReport) -> Vec<String> {
    report
        .outcomes
        .iter()
        .filter(|o| o.status == CheckStatus::Fail)
        .map(|o| format!("::error title=ragate {}::{}", o.name, o.verdict))
        .collect()
}
