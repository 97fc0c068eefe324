#!/usr/bin/env bash
# The slowest integration tests (docs/benchmarks.md, "The slowest integration tests"). Stable Rust
# has no per-test times (libtest's `--report-time` is nightly-only), so the integration binary the
# README's command builds runs every test one after another (`--test-threads=1`), and each result
# line of libtest is timed as it arrives: a test's time is the time since the line before it (wall
# seconds; each test alone on the machine's cores). Ignored tests are left out, as the README's
# command leaves them out; a failing test is listed as such.
#
#   bench/test_times.sh [N=15]    the N slowest, then the sum over every test
set -euo pipefail
cd "$(dirname "$0")/.."
top=${1:-15}
# The README's test build (a no-op after `cargo test --locked --workspace --features nli`).
bin=$(cargo test --locked --workspace --features nli --no-run 2>&1 |
    sed -n 's/^ *Executable tests\/integration\/main.rs (\(.*\))$/\1/p')
[[ -x $bin ]] || { echo "no integration test binary found" >&2; exit 1; }
"$bin" --test-threads=1 2> /dev/null | python3 -c '
import sys, time
top = int(sys.argv[1])
times, failed, last = [], [], None
for line in sys.stdin:
    now = time.monotonic()
    if line.startswith("running "):
        last = now
    elif line.startswith("test ") and " ... " in line and last is not None:
        name, _, result = line[5:].rstrip("\n").partition(" ... ")
        if result != "ignored" and not result.startswith("ignored,"):
            times.append((now - last, name, result))
            if result != "ok":
                failed.append(name)
        last = now
times.sort(reverse=True)
for seconds, name, result in times[:top]:
    print(f"{seconds:7.2f} s  {name}" + ("" if result == "ok" else f"  ({result})"))
print(f"{sum(t for t, _, _ in times):.1f} s over {len(times)} tests, one at a time")
if failed:
    print("failed: " + ", ".join(failed))
    sys.exit(1)
' "$top"
