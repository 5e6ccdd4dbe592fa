#!/usr/bin/env bash
# One nightly round on the installed project: benchmark HEAD, keep the environment
# beside the results, give every track_ value its 99% interval, render the offline
# dashboard (pjrt-conformance dashboard).
# Usage: benchmarks/nightly.sh [--quick] [--machine NAME] [--store] [--repeat K]
#                              [other asv run args]
#   benchmarks/nightly.sh --quick      every benchmark once (repeat=1, number=1,
#                                      rounds=1, no warm-up), results stored
#   benchmarks/nightly.sh --machine cpu-2core-epyc --store
#                                      also copy the round's result file (and its
#                                      <commit8>-pip-freeze.txt, machine.json,
#                                      benchmarks.json) into the committed
#                                      history, benchmarks/results/
#   benchmarks/nightly.sh --machine cpu-2core-epyc --repeat 2
#                                      A/A: 2 rounds of the same commit, each kept as
#                                      benchmarks/noise/<machine>/<commit8>-<env>-run<k>.json
#                                      (k after the runs already there; with --store
#                                      the first round also goes to benchmarks/results/)
#   PJRT_BENCH_PLATFORM=cuda benchmarks/nightly.sh
# asv's own --quick stores no results, so --quick here maps to attribute overrides
# that keep one real measurement per benchmark. Without --machine, the machine is
# this host's name (recorded once with `asv machine --yes`).
# DASHBOARD_OUT (default .asv/dashboard) is where the site goes.
# Without --bench, each benchmark module is one `asv run` (asv stores a run's results
# only when it ends): a round cut short, or a module that fails, keeps the results of
# the modules before it; the script then exits 1 after rendering the dashboard.
# track_ benchmarks write their samples under PJRT_BENCH_SAMPLES (a fresh folder per
# round); `python -m benchmarks.intervals` then writes their statistics into the result
# file's stats_ci_99_a/b, stats_q_25/q_75, stats_number, stats_repeat and samples.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
args=()
machine=""
bench=""
store=""
repeat=1
noise=""
while [ $# -gt 0 ]; do
    case "$1" in
        --bench|-b) bench=1; args+=("$1") ;;
        --bench=*) bench=1; args+=("$1") ;;
        --quick) args+=(-a repeat=1 -a number=1 -a rounds=1 -a warmup_time=0) ;;
        --machine) machine="$2"; args+=(--machine "$2"); shift ;;
        --machine=*) machine="${1#--machine=}"; args+=("$1") ;;
        --store) store=1 ;;
        --repeat) repeat="$2"; noise=1; shift ;;
        --repeat=*) repeat="${1#--repeat=}"; noise=1 ;;
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
one_round() {
    local samples
    samples="$(mktemp -d)"
    export PJRT_BENCH_SAMPLES="$samples"
    rm -f ".asv/results/$machine/${commit:0:8}"-*.json  # this round's values only
    if [ -n "$bench" ]; then
        asv run --python=same --set-commit-hash="$commit" --launch-method=forkserver "${args[@]}" \
            || failed+=("asv run ${args[*]}")
    else
        for module in benchmarks/bench_*.py; do
            module="$(basename "$module" .py)"
            asv run --python=same --set-commit-hash="$commit" --launch-method=forkserver \
                --bench "^${module}\\." "${args[@]}" || failed+=("$module")
        done
    fi
    # nullglob: a round that wrote no result file (every module failed, or cut short)
    # leaves the list empty; benchmarks.intervals then has nothing to do (and would exit
    # 2 on its missing argument, which set -e turns into the end of the script, before
    # the dashboard and the failure summary)
    local results=(".asv/results/$machine/${commit:0:8}"-*.json)
    if [ ${#results[@]} -eq 0 ]; then
        echo "nightly: this round wrote no result file (no track_ interval to give)" >&2
    else
        "$PYTHON" -m benchmarks.intervals "$samples" "${results[@]}" \
            || failed+=("benchmarks.intervals")
    fi
    rm -rf "$samples"
}
for k in $(seq 1 "$repeat"); do
    start=$(date +%s)
    one_round
    echo "nightly: round $k of $repeat took $(( $(date +%s) - start )) s"
    results=(".asv/results/$machine/${commit:0:8}"-*.json)
    if [ -n "$store" ] && [ "$k" = 1 ] && [ ${#results[@]} -eq 0 ]; then
        echo "nightly: nothing stored (the round wrote no result file)" >&2
    elif [ -n "$store" ] && [ "$k" = 1 ]; then
        mkdir -p "benchmarks/results/$machine"
        # the result file(s) and the environment's pip freeze beside them: the dashboard
        # names an existing environment and its jax release from it
        cp "${results[@]}" ".asv/results/$machine/${commit:0:8}-pip-freeze.txt" \
            "benchmarks/results/$machine/"
        # a committed machine.json (history.sh writes every field) is kept as it is
        if [ ! -e "benchmarks/results/$machine/machine.json" ] \
                && [ -e ".asv/results/$machine/machine.json" ]; then
            cp ".asv/results/$machine/machine.json" "benchmarks/results/$machine/"
        fi
        if [ -e .asv/results/benchmarks.json ]; then
            cp .asv/results/benchmarks.json benchmarks/results/benchmarks.json
        fi
        echo "nightly: stored in benchmarks/results/$machine/"
    fi
    if [ -n "$noise" ]; then
        mkdir -p "benchmarks/noise/$machine"
        if [ ! -e "benchmarks/noise/$machine/machine.json" ] \
                && [ -e ".asv/results/$machine/machine.json" ]; then
            cp ".asv/results/$machine/machine.json" "benchmarks/noise/$machine/"
        fi
        for f in "${results[@]}"; do
            base="$(basename "$f" .json)"
            n=1
            while [ -e "benchmarks/noise/$machine/$base-run$n.json" ]; do n=$((n + 1)); done
            cp "$f" "benchmarks/noise/$machine/$base-run$n.json"
            echo "nightly: A/A run stored as benchmarks/noise/$machine/$base-run$n.json"
        done
    fi
done
out="${DASHBOARD_OUT:-.asv/dashboard}"
pjrt-conformance dashboard --out "$out" || echo "nightly: dashboard failed" >&2
echo "dashboard: $out/index.html (a static site: open the file, no server needed)"
if [ ${#failed[@]} -gt 0 ]; then
    echo "nightly: asv run failed for: ${failed[*]} (the other modules' results are stored)" >&2
    exit 1
fi
