#!/usr/bin/env bash
# One nightly round on the installed project: benchmark HEAD, keep the environment
# beside the results, publish the dashboard. Usage: benchmarks/nightly.sh [asv run args]
#   e.g. benchmarks/nightly.sh --quick        (each benchmark once: a smoke run)
#        PJRT_BENCH_PLATFORM=cuda benchmarks/nightly.sh
set -euo pipefail
cd "$(dirname "$0")/.."
commit="$(git rev-parse HEAD)"
asv machine --yes >/dev/null
machine="$(python -c 'import platform; print(platform.node())')"
mkdir -p ".asv/results/$machine"
pip freeze > ".asv/results/$machine/${commit:0:8}-pip-freeze.txt"
asv run --python=same --set-commit-hash="$commit" --launch-method=spawn "$@"
asv publish
echo "dashboard: .asv/html/index.html (serve with: asv preview)"
