#!/usr/bin/env bash
# Certify every real PJRT backend that loads on this machine, one bundle each:
#
#   pip install -e '.[plugins]'          # the real plugins (large wheels, not in `test`)
#   reports/certify-plugins.sh [OUT]     # OUT defaults to reports/
#   pjrt-conformance scoreboard OUT --markdown OUT/README.md --html OUT/scoreboard.html
#
# Backends: jaxlib's built-in CPU client (OUT/cpu/), and each installed CPU plugin loaded
# with --plugin-library (OUT/<folder>/): fastatomstruct-xla-cpu (C API 0.106),
# lammps-jax-pjrt-cpu (0.115), xla-cpu-pjrt (0.81). Every attempt, bundle or not, is
# recorded in OUT/<folder>/attempt.json (command, exit code, seconds, and the error when no
# bundle came out), so a plugin that does not load has a scoreboard row saying why.
# Environment: PYTHON (default: python), WORKERS (-n, default auto), CPU_DEVICES (8),
# EXTRA_ARGS (more `run` arguments, e.g. "--known-failures FILE"), ONLY (space-separated
# folders to run, default all). Exit 0 when every
# attempt produced a bundle, 1 otherwise.
set -u
PY=${PYTHON:-python}
OUT=${1:-reports}
WORKERS=${WORKERS:-auto}
DEVICES=${CPU_DEVICES:-8}
STATUS=0

# folder | python package | expression giving the library path ("" = built-in client)
BACKENDS=(
  "cpu||"
  "cpu-pjrt-plugin|fastatomstruct-xla-cpu|__import__('fastatomstruct_xla_cpu').library_path()"
  "lammps-jax-pjrt-cpu|lammps-jax-pjrt-cpu|str(__import__('lammps_jax_pjrt_cpu').PLUGIN_PATH)"
  "xla-cpu-pjrt|xla-cpu-pjrt|__import__('importlib.util').util.find_spec('xla_plugins.xla_cpu_pjrt').submodule_search_locations[0] + '/xla_cpu_pjrt.so'"
)

for entry in "${BACKENDS[@]}"; do
  IFS='|' read -r folder package expr <<<"$entry"
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $folder "* ]]; then continue; fi
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  mkdir -p "$OUT/$folder"
  args=(run --platform cpu --cpu-devices "$DEVICES" -n "$WORKERS" --output "$OUT/$folder/$stamp")
  library=""
  if [ -n "$expr" ]; then
    library=$("$PY" -c "print($expr)" 2>"$OUT/$folder/.probe.err") || library=""
    if [ -z "$library" ]; then
      "$PY" -m conformance.certification.results.attempt "$OUT/$folder/attempt.json" \
        --backend "$folder" --package "$package" --exit-code 2 --seconds 0 \
        --error-file "$OUT/$folder/.probe.err" --command "pip install $package"
      rm -f "$OUT/$folder/.probe.err"; STATUS=1; continue
    fi
    rm -f "$OUT/$folder/.probe.err"
    # Each of these is XLA's CPU plugin: it flushes subnormals as jaxlib's CPU client does,
    # which its vendor declares (docs/float-controls.md).
    args+=(--plugin-library "$library" --plugin-options "{\"cpu_device_count\": $DEVICES}"
           --float-controls=xla-cpu)
  fi
  # shellcheck disable=SC2206
  args+=(${EXTRA_ARGS:-})
  echo "== $folder: pjrt-conformance ${args[*]}"
  start=$(date +%s)
  "$PY" -m conformance.cli "${args[@]}" 2> >(tee "$OUT/$folder/.stderr" >&2)
  code=$?
  seconds=$(( $(date +%s) - start ))
  "$PY" -m conformance.certification.results.attempt "$OUT/$folder/attempt.json" \
    --backend "$folder" --package "$package" --library "$library" --exit-code "$code" \
    --seconds "$seconds" --bundle "$OUT/$folder/$stamp" --error-file "$OUT/$folder/.stderr" \
    --command "pjrt-conformance ${args[*]}"
  rm -f "$OUT/$folder/.stderr"
  [ -f "$OUT/$folder/$stamp/report.json" ] || STATUS=1
done
exit $STATUS
