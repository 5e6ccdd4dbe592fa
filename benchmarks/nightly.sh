#!/usr/bin/env bash
# One nightly round on the installed project: benchmark HEAD, keep the environment
# beside the results, render the offline dashboard (pjrt-conformance dashboard).
# Usage: benchmarks/nightly.sh [--quick] [--machine NAME] [other asv run args]
#   benchmarks/nightly.sh --quick      every benchmark once (repeat=1, number=1,
#                                      rounds=1, no warm-up), results stored
#   PJRT_BENCH_PLATFORM=cuda benchmarks/nightly.sh
# asv's own --quick stores no results, so --quick here maps to attribute overrides
# that keep one real measurement per benchmark. Without --machine, the machine is
# this host's name (recorded once with `asv machine --yes`).
# DASHBOARD_OUT (default .asv/dashboard) is where the site goes.
# Without --bench, each benchmark module is one `asv run` (asv stores a run's results
# only when it ends): a round cut short, or a module that fails, keeps the results of
# the modules before it; the script then exits 1 after rendering the dashboard.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
machine=""
bench=""
while [ $# -gt 0 ]; do
    case "$1" in
        --bench|-b) bench=1; args+=("$1") ;;
        --bench=*) bench=1; args+=("$1") ;;
        --quick) args+=(-a repeat=1 -a number=1 -a rounds=1 -a warmup_time=0) ;;
        --machine) machine="$2"; args+=(--machine "$2"); shift ;;
        --machine=*) machine="${1#--machine=}"; args+=("$1") ;;
        *) args+=("$1") ;;
    esac
    shift
done
if [ -z "$machine" ]; then
    machine="$(python3 -c 'import platform; print(platform.node())')"
    asv machine --yes >/dev/null
else
    asv machine --yes --machine "$machine" >/dev/null
fi
commit="$(git rev-parse HEAD)"
mkdir -p ".asv/results/$machine"
pip freeze > ".asv/results/$machine/${commit:0:8}-pip-freeze.txt"
shopt -s nullglob
failed=()
if [ -n "$bench" ]; then
    asv run --python=same --set-commit-hash="$commit" --launch-method=spawn "${args[@]}" \
        || failed+=("asv run ${args[*]}")
else
    for module in benchmarks/bench_*.py; do
        module="$(basename "$module" .py)"
        asv run --python=same --set-commit-hash="$commit" --launch-method=spawn \
            --bench "^${module}\\." "${args[@]}" || failed+=("$module")
    done
fi
out="${DASHBOARD_OUT:-.asv/dashboard}"
pjrt-conformance dashboard --out "$out"
echo "dashboard: $out/index.html (a static site: open the file, no server needed)"
if [ ${#failed[@]} -gt 0 ]; then
    echo "nightly: asv run failed for: ${failed[*]} (the other modules' results are stored)" >&2
    exit 1
fi
