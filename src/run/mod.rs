//! One gate run of a tier, in order: the checks before the pipeline runs ([`preflight`]), the
//! run obtained and evaluated ([`tier_run`], [`repeats`]), the baseline and labels it is compared
//! with ([`tier_baseline`], [`tier_labels`], [`rejudge`]), and its end ([`finish`]); and what
//! other commands share of it (the judges a config calls, a judging plan and its budget).

pub(crate) mod config_judge;
pub(crate) mod finish;
pub(crate) mod gate_options;
pub(crate) mod history_series;
pub(crate) mod judge_events;
pub(crate) mod judged_depth;
pub(crate) mod judged_run;
pub(crate) mod judges_called;
pub(crate) mod plan;
pub(crate) mod preflight;
pub(crate) mod probe;
pub(crate) mod rejudge;
pub(crate) mod repeats;
pub(crate) mod tier_baseline;
pub(crate) mod tier_labels;
pub(crate) mod tier_run;
