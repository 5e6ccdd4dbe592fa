#!/usr/bin/env bash
# Reproduce the committed benchmark history (docs/benchmark-history.md): every benchmark
# (bench_*: transfer, dispatch, compile, sharding, kernels, distributed, and bench_eras on
# jaxlib's built-in CPU client and three XLA CPU plugin eras) in every virtualenv of asv.matrix.conf.json
# (jax/jaxlib 0.10.0-0.10.2 on Python 3.11, 0.11.0-0.12.0.1 on Python 3.12, each with the
# `plugins` extra), results into benchmarks/results/ (asv's own format; commit them).
#
#   pip install -e '.[benchmarks]'
#   benchmarks/history.sh                 # benchmark HEAD
#   COMMIT=0c61724 benchmarks/history.sh  # another commit (its runtime is built and installed)
#   benchmarks/history.sh --bench 'bench_eras.Dispatch'   # more `asv run` arguments
#   benchmarks/history.sh -E virtualenv-py3.11-jax0.10.2-jaxlib0.10.2   # one environment
#   NOISE_RUN=2 benchmarks/history.sh -E ...   # also keep it as A/A repeat 2 (benchmarks/noise/)
#   BENCH='^bench_eras\.' benchmarks/history.sh   # some benchmarks only (default: every one)
#   ROUNDS=2 benchmarks/history.sh   # asv rounds (default 1; benchmarks/sampling.py's 2)
#
# Environment: ASV (default: asv), MACHINE (default: cpu-<nproc>core-<cpu family>, e.g.
# cpu-2core-epyc on 'AMD EPYC', cpu-2core-xeon on 'Intel(R) Xeon(R) Processor'; the
# machine entry is written from lscpu/nproc/meminfo), COMMIT (default: HEAD).
set -euo pipefail
cd "$(dirname "$0")/.."
ASV=${ASV:-asv}
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
family=$(printf '%s\n' "$cpu" | sed 's/([RT]M*)//g' | tr ' ' '\n' | grep -v -x -E 'AMD|Intel|' | head -1 | tr 'A-Z' 'a-z' || true)
MACHINE=${MACHINE:-cpu-$(nproc)core-${family:-unknown}}
COMMIT=$(git rev-parse "${COMMIT:-HEAD}")
# asv looks for each Python of the config as pythonX.Y on PATH; pyenv's shims answer only
# for its global versions, so an installed pyenv version that PATH lacks goes first.
for py in $(python3 -c 'import json; print(*json.load(open("asv.matrix.conf.json"))["pythons"])'); do
  if ! "python$py" -c '' 2>/dev/null; then
    for bin in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$py".*/bin; do
      if [ -x "$bin/python$py" ]; then PATH="$bin:$PATH"; break; fi
    done
  fi
done
ram=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) * 1024 ))
# The machine entry of ~/.asv-machine.json, written here: `asv machine --yes` (asv 0.6.6)
# keeps only the fields that differ from its own detection, so on a fresh file it stored
# the bare name and the results' machine.json lost cpu, num_cpu, ram, os and arch.
"${PYTHON:-python}" - "$MACHINE" "${cpu:-unknown}" "$(nproc)" "$ram" "$(uname -sr)" "$(uname -m)" <<'EOF'
import json, os, sys
path = os.path.expanduser("~/.asv-machine.json")
doc = json.load(open(path)) if os.path.exists(path) else {"version": 1}
name, cpu, num_cpu, ram, os_name, arch = sys.argv[1:]
doc[name] = {"machine": name, "cpu": cpu, "num_cpu": num_cpu, "ram": ram, "os": os_name,
             "arch": arch}
with open(path + ".tmp", "w") as out:
    json.dump(doc, out, indent=4, sort_keys=True)
os.replace(path + ".tmp", path)
EOF
start=$(date +%s)
# One round (rounds=1) of the samples benchmarks/sampling.py sets (10-15 per value);
# track_ benchmarks write their samples under PJRT_BENCH_SAMPLES, and
# benchmarks.intervals puts asv's 99% interval of them into the result files.
samples=$(mktemp -d)
stamp=$(mktemp)  # taken before the run: a result file newer than it is this run's
# dated 2 s back: a file system with coarse timestamps gives a file written in the same
# tick the stamp's time, which -nt calls not newer (seen in CI under load)
touch -d "@$(( $(date +%s) - 2 ))" "$stamp"
trap 'rm -rf "$samples" "$stamp"' EXIT  # also when asv fails (set -e ends the script)
export PJRT_BENCH_SAMPLES=$samples
"$ASV" run --config asv.matrix.conf.json --machine "$MACHINE" --bench "${BENCH:-^bench_}" \
  --launch-method forkserver -a "rounds=${ROUNDS:-1}" "$@" "$COMMIT^!"
echo "history: asv matrix run took $(( $(date +%s) - start )) s; results in benchmarks/results/"
# The result files this run wrote, not those of the commit's other environments left by
# earlier (-E) runs: listed before benchmarks.intervals rewrites any file.
written=()
for f in "benchmarks/results/$MACHINE/$(printf %.8s "$COMMIT")"-*.json; do
  if [ -f "$f" ] && [ "$f" -nt "$stamp" ]; then written+=("$f"); fi
done
if [ ${#written[@]} -gt 0 ]; then
  "${PYTHON:-python}" -m benchmarks.intervals "$samples" "${written[@]}"
else
  echo "history: asv wrote no result file of $(printf %.8s "$COMMIT")" >&2
fi
# NOISE_RUN=K: this round is also repeat K of an A/A measurement of the commit, kept
# where asv does not overwrite it (benchmarks/noise/<machine>/<commit8>-<env>-runK.json;
# the dashboard's run-to-run noise is the spread of these repeats). Only the files this
# run wrote: a stale file of another environment copied as a repeat would be a copy, not
# a measurement.
if [ -n "${NOISE_RUN:-}" ]; then
  mkdir -p "benchmarks/noise/$MACHINE"
  for f in "${written[@]}"; do
    cp "$f" "benchmarks/noise/$MACHINE/$(basename "${f%.json}")-run$NOISE_RUN.json"
  done
fi
"${PYTHON:-python}" -m benchmarks.history  # every jaxlib of the matrix and every era measured?
