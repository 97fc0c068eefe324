//! JUnit XML of a gate run (minimal placeholder; see the reports issue).

use crate::gate::GateReport;

pub fn render(report: &GateReport) -> String {
    format!(
        "<testsuites><testsuite name=\"ragate.{}\" tests=\"{}\"/></testsuites>\n",
        report.tier,
        report.outcomes.len()
    )
}

pub fn render_setup_error(tier: &str, message: &str) -> String {
    format!(
        "<testsuites><testsuite name=\"ragate.{tier}\" tests=\"1\" errors=\"1\"><!-- {message} --></testsuite></testsuites>\n"
    )
}
