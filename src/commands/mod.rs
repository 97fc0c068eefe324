//! Runs a parsed command and returns its exit code; `main` only prints errors.

mod agreement;
pub(crate) mod baseline;
mod compare;
mod convert;
mod eval;
mod gate;
pub(crate) mod history;
mod holes;
mod init;
mod judge_eval;
mod manual;
pub(crate) mod merge;
mod plan;
mod qrels;
mod report;
mod synth;
mod validate;

use crate::cli::{BaselineCommand, Cli, Command, HistoryCommand, QrelsCommand};
use crate::error::Result;
use crate::term;

pub(crate) fn run(cli: Cli) -> Result<i32> {
    // Children lead process groups of their own: ragate passes SIGINT and SIGTERM on to them.
    if let Err(e) = crate::process_group::end_on_signals() {
        term::warning(format!(
            "cannot watch for SIGINT/SIGTERM ({e}): on either, child processes are left running"
        ));
    }
    let result = run_command(cli);
    // A command that ended because a signal stopped its children waits for the signal's exit.
    crate::process_group::hold_if_stopping();
    result
}

fn run_command(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Eval(args) => eval::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Baseline(BaselineCommand::Accept(args)) => baseline::accept(args),
        Command::Baseline(BaselineCommand::Show(args)) => baseline::show(args),
        Command::Compare(args) => compare::run(args),
        Command::Validate(args) => validate::run(args),
        Command::JudgeAgreement(args) => agreement::run(args),
        Command::JudgeEval(args) => judge_eval::run(args),
        Command::Convert(args) => convert::run(args),
        Command::History(HistoryCommand::Add(args)) => history::add(args),
        Command::History(HistoryCommand::Show(args)) => history::show(args),
        Command::Init(args) => init::run(args),
        Command::Holes(args) => holes::run(args),
        Command::Qrels(QrelsCommand::Apply(args)) => qrels::apply(args),
        Command::Qrels(QrelsCommand::Accept(args)) => qrels::accept(args),
        Command::Synth(args) => synth::run(args),
        Command::Report(args) => report::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Completions(args) => manual::completions(args),
        Command::Man(args) => manual::man(args),
    }
}
