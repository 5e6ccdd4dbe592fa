"""The standalone reproductions in ``docs/upstream/`` still reproduce: each runs in a fresh
process (no pytest, no import of this project) and exits non-zero while its defect is
present. Skipped where the installed versions are outside the catalog entry's range."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.certification.catalog import defect_catalog

UPSTREAM = Path(__file__).resolve().parents[1] / "docs" / "upstream"
REPROS = {"is_ready_clone_deleted_array.py": "jaxlib-is-ready-on-deleted-array",
          "donation_sharded_twice.py": "xla-cpu-donated-input-execute-crash",
          "missed_heartbeat_bad_cast.py": "jaxlib-missed-heartbeat-bad-cast",
          "atan2_subnormal_pairs.py": "xla-cpu-atan2-subnormal-pairs",
          "argminmax_nan_ties.py": "jax-argminmax-nan-ties",
          "spmd_replicated_move.py": "xla-spmd-replicated-move-loses-bits",
          "spmd_dynamic_update_slice_clamp.py": "xla-spmd-dynamic-update-slice-clamp",
          "spmd_dynamic_slice_clamp.py": "xla-spmd-dynamic-slice-clamp",
          "spmd_pad_interior_sharded_result.py": "xla-spmd-pad-interior-sharded-result",
          "spmd_slice_of_high_padding_crash.py": "xla-spmd-slice-of-high-padding-crash"}


def test_every_report_has_a_reproduction_and_a_catalog_entry():
    ids = {d.id for d in defect_catalog.load()}
    assert set(REPROS.values()) <= ids
    scripts = {p.name for p in UPSTREAM.glob("*.py")}
    assert scripts == set(REPROS)
    for script in scripts:
        text = (UPSTREAM / script).read_text()
        assert not re.search(r"^\s*(from|import)\s+(conformance|runtime|tests)\b", text,
                             re.MULTILINE), f"{script} imports this project"
        assert (UPSTREAM / script.replace(".py", ".md")).is_file()


@pytest.mark.parametrize("script", sorted(REPROS))
def test_reproduction_reproduces_in_a_fresh_process(script, tmp_path):
    (defect,) = [d for d in defect_catalog.load() if d.id == REPROS[script]]
    (entry, *_) = defect_catalog.entries([defect])
    if not entry.applies("cpu"):
        pytest.skip(f"installed versions outside {defect.id}'s range ({defect.requirement})")
    proc = subprocess.run([sys.executable, str(UPSTREAM / script)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode != 0, f"{script} no longer reproduces:\n{proc.stdout[-2000:]}"
    assert "expected" in proc.stdout and "observed" in proc.stdout, proc.stdout[-2000:]
