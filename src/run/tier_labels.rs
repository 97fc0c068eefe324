//! The tier's human labels file, read here (the gate does no I/O) once per run and turned into
//! the judge calibrations that the decision takes.

use crate::baseline::results::Results;
use crate::config::Tier;
use crate::error::Result;
use crate::gate::calibration::{self, Calibration};
use crate::input::labels::{self, Label};
use crate::input::text_file::TextFile;
use crate::metrics::labelled::check_label_metric;
use crate::metrics::metric::MetricSpec;

/// The tier's human labels (none when the tier has no `labels:`). A file that is missing names
/// the config key `tiers.<tier>.labels`; one that does not parse names its line.
pub(crate) fn read(tier: &Tier) -> Result<Option<Vec<Label>>> {
    let Some(path) = &tier.labels else {
        return Ok(None);
    };
    let file =
        TextFile::read(path).map_err(|e| e.named_by(&format!("tiers.{}.labels", tier.name)))?;
    Ok(Some(labels::read(&file, check_label_metric)?))
}

/// The calibrations of the judged metrics `specs` on `results` against a tier's labels (none
/// without labels).
pub(crate) fn calibrations(
    labels: Option<&[Label]>,
    specs: &[MetricSpec],
    results: &Results,
) -> Vec<Calibration> {
    labels.map_or_else(Vec::new, |labels| {
        calibration::calibrate(results, specs, labels)
    })
}
