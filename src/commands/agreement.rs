//! `ragate judge-agreement`: two judges on the same claims of a tier's answers: agreement,
//! Cohen's kappa, the confusion matrix and the claims they disagree on.

use std::collections::BTreeMap;

use serde_json::json;

use crate::cli::{AgreementArgs, GateFormat};
use crate::config::{self, Config};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::metrics::generation::ClaimVerdict;
use crate::metrics::metric::JudgedMetric;
use crate::metrics::metric::Metric;
use crate::outputs::stdout::write_document;
use crate::outputs::stdout::write_human;
use crate::run::judged_run::JudgedRun;
use crate::stats::agreement::{Agreement, agreement};
use crate::suggest;

/// How many disagreements are listed.
const SHOWN: usize = 20;

fn check_judge(config: &Config, name: &str) -> Result<()> {
    if config.judges.contains_key(name) {
        return Ok(());
    }
    let names: Vec<&str> = config.judges.keys().map(String::as_str).collect();
    Err(Error::Usage(suggest::did_you_mean(
        format!(
            "no judge `{name}` in {}: expected one of {}",
            config.path.display(),
            names.join(", ")
        ),
        name,
        names.iter().copied(),
    )))
}

pub(super) fn run(args: AgreementArgs) -> Result<i32> {
    let config = config::load(&args.config)?;
    let tier = config.tier(&args.tier)?;
    let [first, second] = args.judges.as_slice() else {
        return Err(Error::Usage(format!(
            "--judges takes two judge names, A,B: got {}",
            args.judges.len()
        )));
    };
    check_judge(&config, first)?;
    check_judge(&config, second)?;
    let run = JudgedRun::open(&config, &tier.name, &args.run)?;
    let claims_of = |judge: &str| -> Result<BTreeMap<String, Vec<ClaimVerdict>>> {
        Ok(run
            .judge(judge, Metric::Judged(JudgedMetric::Faithfulness))?
            .into_iter()
            .map(|q| (q.qid, q.claims))
            .collect())
    };
    let (a, b) = (claims_of(first)?, claims_of(second)?);
    let (pairs, disagreements) = paired((first, second), &a, &b);
    let Some(result) = agreement(&pairs) else {
        return Err(Error::input(
            &args.run,
            "no claims to judge: expected answers with at least one claim",
        ));
    };
    let compared = Compared {
        tier: &tier.name,
        judges: (first, second),
        claims: pairs.len(),
        result,
        disagreements,
    };
    if args.format == GateFormat::Json {
        write_document(&compared.document())?;
    } else {
        write_human(&compared.text())?;
    }
    Ok(exit_code::SUCCESS)
}

/// Each claim's pair of verdicts (first, second), and the claims the judges disagree on as
/// lines for people.
fn paired(
    (first, second): (&str, &str),
    a: &BTreeMap<String, Vec<ClaimVerdict>>,
    b: &BTreeMap<String, Vec<ClaimVerdict>>,
) -> (Vec<(bool, bool)>, Vec<String>) {
    let verdict = |supported: bool| {
        if supported {
            "supported"
        } else {
            "unsupported"
        }
    };
    let mut pairs = Vec::new();
    let mut disagreements = Vec::new();
    for (qid, claims_a) in a {
        let claims_b = &b[qid];
        for (x, y) in claims_a.iter().zip(claims_b) {
            pairs.push((x.supported, y.supported));
            if x.supported != y.supported {
                disagreements.push(format!(
                    "{qid}: {first} {} / {second} {}: {}",
                    verdict(x.supported),
                    verdict(y.supported),
                    x.claim
                ));
            }
        }
    }
    (pairs, disagreements)
}

/// Two judges compared on a tier's claims.
struct Compared<'a> {
    tier: &'a str,
    judges: (&'a str, &'a str),
    claims: usize,
    result: Agreement,
    disagreements: Vec<String>,
}

impl Compared<'_> {
    /// `--format json`.
    fn document(&self) -> String {
        let [yy, yn, ny, nn] = self.result.confusion;
        let document = json!({
            "tier": self.tier,
            "judges": [self.judges.0, self.judges.1],
            "claims": self.claims,
            "agreement": self.result.observed,
            "kappa": self.result.kappa,
            "confusion": {
                "both_supported": yy,
                "first_only_supported": yn,
                "second_only_supported": ny,
                "both_unsupported": nn,
            },
            "disagreements": self.disagreements,
        });
        crate::json_text::document(&document)
    }

    /// For people: agreement, kappa, the confusion matrix and the first disagreements.
    fn text(&self) -> String {
        let [yy, yn, ny, nn] = self.result.confusion;
        let (first, second) = self.judges;
        let mut out = format!(
            "judges `{first}` and `{second}` on {} claims of tier `{}`\n\
             agreement {:.3}, Cohen's kappa {}\n\n\
             {:>24} {second}: supported  unsupported\n\
             {first}: supported   {yy:>21}  {yn:>11}\n\
             {first}: unsupported {ny:>21}  {nn:>11}\n",
            self.claims,
            self.tier,
            self.result.observed,
            self.result
                .kappa
                .map_or("undefined (both judges constant)".to_string(), |k| format!(
                    "{k:.3}"
                )),
            "",
        );
        let disagreements = &self.disagreements;
        if !disagreements.is_empty() {
            out.push_str(&format!("\n{} disagreements:\n", disagreements.len()));
            for line in disagreements.iter().take(SHOWN) {
                out.push_str(&format!("- {line}\n"));
            }
            if disagreements.len() > SHOWN {
                out.push_str(&format!("- ... and {} more\n", disagreements.len() - SHOWN));
            }
        }
        out
    }
}
