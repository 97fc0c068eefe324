#!/usr/bin/env python3
"""Turns one `ragate gate --format json` document (ragate-gate/1) into the action's outputs and
decides whether to post the sticky pull-request comment.

    gate-report.py --json FILE --exit-code N [--comment-mode MODE] [--comment-exists true|false]

prints `key=value` lines for $GITHUB_OUTPUT:

    status          pass | regression | error | no-baseline
    verdict         pass | inconclusive | regression | error | no-baseline: the status as every
                    output of ragate states it (a passing run with an inconclusive check is
                    inconclusive)
    failed-checks   the number of checks whose status is `fail` or `error`
    changed         true when some check is not `pass`, or the run did not pass
    comment         post | update | skip (what to do with the sticky comment)

The document may come from an untrusted artifact (the fork-safe `workflow_run` workflow), so it
is read as data only: at most MAX_BYTES, strict JSON, every value checked against the schema's
enums; the values printed are fixed words and integers, never text from the document. A document
that is missing or does not fit the schema is reported on stderr and the status falls back to
the exit code (0 pass, 1 regression, anything else error). A status that contradicts the exit
code is an error. A shard's document (`gate --shard I/N`, ragate-gate-shard/1) has no checks: the
status comes from the exit code, without a warning, and nothing changed. Exit status: 0, or 2 for
a bad command line.
"""

import argparse
import json
import sys

MAX_BYTES = 16 * 1024 * 1024
RUN_STATUSES = {"pass": 0, "regression": 1, "error": 2, "no-baseline": 2}
# The verdicts of docs/schema/gate.schema.json, with the status each belongs to.
VERDICTS = {
    "pass": "pass",
    "inconclusive": "pass",
    "regression": "regression",
    "error": "error",
    "no-baseline": "no-baseline",
}
SHARD_FORMAT = "ragate-gate-shard/1"
# The check statuses of docs/schema/gate.schema.json; `warn` is a drift shown under
# `gate: { drift: warn }`, which does not fail the run.
CHECK_STATUSES = {"pass", "improved", "inconclusive", "fail", "skipped", "error", "warn"}
FAILED = {"fail", "error"}
MODES = ("always", "on-change", "on-failure")


def warn(message):
    print(f"::warning title=ragate gate-report::{message}", file=sys.stderr)


def read_document(path):
    """The parsed document, or None (with a warning) when it is missing, too big or malformed."""
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_BYTES + 1)
    except OSError as err:
        warn(f"no gate JSON at {path} ({err.strerror}); the status comes from the exit code")
        return None
    if len(raw) > MAX_BYTES:
        warn(f"{path} is over {MAX_BYTES} bytes; ignored, the status comes from the exit code")
        return None
    try:
        document = json.loads(raw.decode("utf-8"))
    except ValueError as err:
        # Not UTF-8, not JSON, or an integer past Python's digit limit; the message holds no
        # text of the document.
        warn(f"{path} is not JSON ({type(err).__name__}); the status comes from the exit code")
        return None
    except RecursionError:
        warn(f"{path} is nested too deeply to read; the status comes from the exit code")
        return None
    if isinstance(document, dict) and document.get("format") == SHARD_FORMAT:
        return document
    if not isinstance(document, dict) or document.get("format") != "ragate-gate/1":
        warn(f"{path} is not a ragate-gate/1 document; the status comes from the exit code")
        return None
    return document


def summarize(document, exit_code):
    """(status, failed checks or None, changed) from the document and the exit code."""
    by_exit = {0: "pass", 1: "regression"}.get(exit_code, "error")
    if document is None:
        return by_exit, None, by_exit != "pass"
    if document.get("format") == SHARD_FORMAT:
        return by_exit, None, False
    status = document.get("status")
    checks = document.get("checks")
    # Only strings are looked up: a list or an object where a status belongs is no status.
    if not isinstance(status, str) or status not in RUN_STATUSES or not isinstance(checks, list):
        warn("the gate JSON has no valid status or checks; the status comes from the exit code")
        return by_exit, None, by_exit != "pass"
    if RUN_STATUSES[status] != exit_code:
        warn(f"the gate JSON says '{status}' but ragate exited with {exit_code}")
        return "error", None, True
    statuses = []
    for check in checks:
        check_status = check.get("status") if isinstance(check, dict) else None
        if not isinstance(check_status, str) or check_status not in CHECK_STATUSES:
            warn("a check in the gate JSON has no valid status; the run counts as an error")
            return "error", None, True
        statuses.append(check_status)
    failed = sum(1 for s in statuses if s in FAILED)
    changed = status != "pass" or any(s != "pass" for s in statuses)
    return status, failed, changed


def verdict_of(document, status):
    """The run's verdict: the document's own when it is one of the schema's and belongs to the
    status, else the status, told inconclusive when a check of a passing run is."""
    if isinstance(document, dict) and document.get("format") == "ragate-gate/1":
        verdict = document.get("verdict")
        if isinstance(verdict, str) and VERDICTS.get(verdict) == status:
            return verdict
        checks = document.get("checks")
        if status == "pass" and isinstance(checks, list) and any(
            isinstance(c, dict) and c.get("status") == "inconclusive" for c in checks
        ):
            return "inconclusive"
    return status


def decide(mode, status, changed, comment_exists):
    """post, update or skip: what the sticky comment gets in this comment mode."""
    if mode == "on-failure":
        wanted = status != "pass"
    elif mode == "on-change":
        # Nothing moved and no earlier comment: no new noise. An existing comment is still
        # updated, so it never shows a stale failure.
        wanted = changed or comment_exists
    else:
        wanted = True
    if not wanted:
        return "skip"
    return "update" if comment_exists else "post"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", required=True, help="the output of ragate gate --format json")
    parser.add_argument("--exit-code", required=True, help="ragate's exit code")
    parser.add_argument("--comment-mode", default="on-change", help="|".join(MODES))
    parser.add_argument("--comment-exists", default="false", help="true when a sticky comment exists")
    args = parser.parse_args(argv)
    if args.comment_mode not in MODES:
        parser.error(f"--comment-mode must be one of {', '.join(MODES)}, not '{args.comment_mode}'")
    if args.comment_exists not in ("true", "false"):
        parser.error(f"--comment-exists must be true or false, not '{args.comment_exists}'")
    try:
        exit_code = int(args.exit_code)
    except ValueError:
        parser.error(f"--exit-code must be an integer, not '{args.exit_code}'")
    document = None
    try:
        document = read_document(args.json)
        status, failed, changed = summarize(document, exit_code)
        verdict = verdict_of(document, status)
    except Exception as err:  # the last guard: a traceback would leave the outputs unset
        warn(f"the gate JSON could not be read ({type(err).__name__}); the status comes from the exit code")
        status, failed, changed = summarize(None, exit_code)
        verdict = status
    comment = decide(args.comment_mode, status, changed, args.comment_exists == "true")
    print(f"status={status}")
    print(f"verdict={verdict}")
    print(f"failed-checks={'' if failed is None else failed}")
    print(f"changed={'true' if changed else 'false'}")
    print(f"comment={comment}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
