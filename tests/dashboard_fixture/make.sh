#!/usr/bin/env bash
# Regenerates results/ (the dashboard tests' fixture) with a real asv run: the tiny suite
# in suite/ committed twice (two days apart) in a scratch git repository, each commit
# measured once per benchmark (benchmarks/nightly.sh --quick's overrides).
# Usage: tests/dashboard_fixture/make.sh   (needs asv and numpy on PATH's python)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/suite/benchmarks" "$here/asv.conf.json" "$work/"
cd "$work"
export HOME="$work"  # asv machine writes ~/.asv-machine.json: keep it out of the real home
git init -q . && git add -A
GIT_COMMITTER_DATE="2026-11-20T10:00:00Z" git -c user.email=f@x -c user.name=fixture \
    commit -q --date="2026-11-20T10:00:00Z" -m one
echo "# second commit" >> benchmarks/__init__.py && git add -A
GIT_COMMITTER_DATE="2026-11-22T10:00:00Z" git -c user.email=f@x -c user.name=fixture \
    commit -q --date="2026-11-22T10:00:00Z" -m two
asv machine --yes --machine fixture-host --arch x86_64 --cpu "fixture cpu" --num_cpu 2 \
    --os Linux --ram 8GB --config asv.conf.json >/dev/null
for commit in $(git rev-list --reverse HEAD); do
    asv run --python=same --machine fixture-host --set-commit-hash="$commit" \
        -a repeat=1 -a number=1 -a rounds=1 -a warmup_time=0 >/dev/null
    pip freeze 2>/dev/null | grep -E '^(jax|jaxlib|numpy)==' \
        > "results/fixture-host/${commit:0:8}-pip-freeze.txt" || true
done
rm -rf "$here/results"
cp -r results "$here/results"
echo "wrote $here/results"
