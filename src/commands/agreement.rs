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
use crate::stats::agreement::agreement;
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
    let mut pairs = Vec::new();
    let mut disagreements = Vec::new();
    for (qid, claims_a) in &a {
        let claims_b = &b[qid];
        for (x, y) in claims_a.iter().zip(claims_b) {
            pairs.push((x.supported, y.supported));
            if x.supported != y.supported {
                disagreements.push(format!(
                    "{qid}: {first} {} / {second} {}: {}",
                    if x.supported {
                        "supported"
                    } else {
                        "unsupported"
                    },
                    if y.supported {
                        "supported"
                    } else {
                        "unsupported"
                    },
                    x.claim
                ));
            }
        }
    }
    let Some(result) = agreement(&pairs) else {
        return Err(Error::input(
            &args.run,
            "no claims to judge: expected answers with at least one claim",
        ));
    };
    let [yy, yn, ny, nn] = result.confusion;
    if args.format == GateFormat::Json {
        let document = json!({
            "tier": tier.name,
            "judges": [first, second],
            "claims": pairs.len(),
            "agreement": result.observed,
            "kappa": result.kappa,
            "confusion": {
                "both_supported": yy,
                "first_only_supported": yn,
                "second_only_supported": ny,
                "both_unsupported": nn,
            },
            "disagreements": disagreements,
        });
        write_document(&crate::json_text::document(&document))?;
        return Ok(exit_code::SUCCESS);
    }
    let mut out = format!(
        "judges `{first}` and `{second}` on {} claims of tier `{}`\n\
         agreement {:.3}, Cohen's kappa {}\n\n\
         {:>24} {second}: supported  unsupported\n\
         {first}: supported   {yy:>21}  {yn:>11}\n\
         {first}: unsupported {ny:>21}  {nn:>11}\n",
        pairs.len(),
        tier.name,
        result.observed,
        result
            .kappa
            .map_or("undefined (both judges constant)".to_string(), |k| format!(
                "{k:.3}"
            )),
        "",
    );
    if !disagreements.is_empty() {
        out.push_str(&format!("\n{} disagreements:\n", disagreements.len()));
        for line in disagreements.iter().take(SHOWN) {
            out.push_str(&format!("- {line}\n"));
        }
        if disagreements.len() > SHOWN {
            out.push_str(&format!("- ... and {} more\n", disagreements.len() - SHOWN));
        }
    }
    write_human(&out)?;
    Ok(exit_code::SUCCESS)
}
