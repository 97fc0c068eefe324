//! A metric name as the command line wrote it: ragate's or an alias, kept so that the alias
//! can be noted ([`crate::metrics::aliases::note`]).

use std::str::FromStr;

use crate::metrics::metric::{Metric, UnknownMetric};

/// A metric as written: ragate's name or an alias, with the metric it reads as.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenMetric {
    /// The metric.
    pub metric: Metric,
    /// The name as written.
    pub written: String,
}

impl FromStr for WrittenMetric {
    type Err = UnknownMetric;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(WrittenMetric {
            metric: text.parse()?,
            written: text.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_metric_keeps_its_spelling() {
        let written: WrittenMetric = "RR@10".parse().unwrap();
        assert_eq!(written.written, "RR@10");
        assert_eq!(written.metric.to_string(), "mrr@10");
        assert!("RR@0".parse::<WrittenMetric>().is_err());
    }
}
