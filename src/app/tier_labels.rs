//! The tier's human labels file, read here (the gate does no I/O) and turned into the judge
//! calibrations that the decision takes.

use crate::baseline::results::Results;
use crate::config::Tier;
use crate::error::Result;
use crate::gate::calibration::{self, Calibration};
use crate::input::labels;
use crate::input::text_file::TextFile;
use crate::metrics::metric::MetricSpec;

/// The calibrations of a tier's judged metrics on `results`, from the tier's labels file (none
/// when the tier has no `labels:`).
pub(super) fn calibrations(
    tier: &Tier,
    specs: &[MetricSpec],
    results: &Results,
) -> Result<Vec<Calibration>> {
    match &tier.labels {
        Some(path) => Ok(calibration::calibrate(
            results,
            specs,
            &labels::read(&TextFile::read(path)?)?,
        )),
        None => Ok(Vec::new()),
    }
}
