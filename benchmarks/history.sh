#!/usr/bin/env bash
# Reproduce the committed benchmark history (docs/benchmark-history.md): the backend-era
# benchmarks (bench_eras: transfer, dispatch, compile, kernels on jaxlib's built-in CPU
# client and three XLA CPU plugin eras) in every virtualenv of asv.matrix.conf.json
# (jax/jaxlib 0.10.0, 0.10.1, 0.10.2, each with the `plugins` extra), results into
# benchmarks/results/ (asv's own format; commit them).
#
#   pip install -e '.[benchmarks]'
#   benchmarks/history.sh                 # benchmark HEAD
#   COMMIT=0c61724 benchmarks/history.sh  # another commit (its runtime is built and installed)
#   benchmarks/history.sh --bench 'bench_eras.Dispatch'   # more `asv run` arguments
#
# Environment: ASV (default: asv), MACHINE (default: cpu-2core-epyc; the machine entry is
# written from lscpu/nproc/meminfo), COMMIT (default: HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
ASV=${ASV:-asv}
MACHINE=${MACHINE:-cpu-2core-epyc}
COMMIT=$(git rev-parse "${COMMIT:-HEAD}")
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
ram=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) * 1024 ))
"$ASV" machine --config asv.matrix.conf.json --yes --machine "$MACHINE" --cpu "${cpu:-unknown}" \
  --num_cpu "$(nproc)" --ram "$ram" --os "$(uname -sr)" --arch "$(uname -m)" >/dev/null
start=$(date +%s)
# One round, few samples: the history is many short points; track_ratio_* pair each
# operation with its reference inside one process, so they need no more.
"$ASV" run --config asv.matrix.conf.json --machine "$MACHINE" --bench '^bench_eras\.' \
  --launch-method forkserver -a rounds=1 -a repeat=3 -a warmup_time=0.05 \
  "$@" "$COMMIT^!"
echo "history: asv matrix run took $(( $(date +%s) - start )) s; results in benchmarks/results/"
"${PYTHON:-python}" -m benchmarks.history  # every jaxlib of the matrix and every era measured?
