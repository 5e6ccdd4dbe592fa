"""The sequences area (conformance/test_sequences.py) against its mutants, in process.

The healthy CPU client passes the state machine; each mutant of tests/mutants/sequences.py
fails it within 25 derandomized sequences; the failure carries its
sequence as a standalone script, which runs (exit 0 on the healthy client: its model
matches) and reports a model that differs (exit 1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from conformance import test_sequences
from conformance.programs import sequence_script
from runtime import xla_client
from tests.mutants import CATALOG
from tests.mutants import sequences

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = sorted(n for n, m in CATALOG.items() if m.targets[0].module == sequences.TARGET)
#: Derandomized draws without shrinking (a kill needs one failing sequence): 25, since
#: ci's 8 did not reach a donation of an unshared array in a fresh-clone CI run.
CI = settings(max_examples=25, derandomize=True, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def native():
    from runtime import _compat

    return _compat.native.make_cpu_client(num_devices=2)


def _run(client):
    test_sequences.run(client, xla_client, "cpu", 2, "conformance/test_sequences.py::t", CI)


def test_the_four_sequence_mutants_are_in_the_catalog():
    assert len(MUTANTS) == 4, MUTANTS


def test_the_healthy_client_passes(native):
    from runtime._client import Client

    _run(Client(native))


@pytest.mark.parametrize("name", MUTANTS)
def test_each_mutant_fails_the_machine_with_its_sequence(native, name):
    with pytest.raises(AssertionError) as caught:
        _run(CATALOG[name].client(native))
    found = sequence_script.of(caught.value)
    assert found and found["lines"] > 0, found
    assert "client.buffer_from_pyval(" in found["script"], found["script"]


def test_a_failing_sequence_is_a_standalone_script(native, tmp_path):
    """A mutant's failing sequence, run standalone on the healthy client: 0 (its model
    matches the real backend); with one model value changed: 1 (the check can fail)."""
    with pytest.raises(AssertionError) as caught:
        _run(CATALOG["seq-output-aliases-input"].client(native))
    text = sequence_script.of(caught.value)["script"]
    assert "import conformance" not in text and "from conformance" not in text
    path = tmp_path / "repro.py"
    path.write_text(text)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    fixed = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                           timeout=300, env=env, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert fixed.stdout.startswith("fixed"), fixed.stdout
    broken = text.replace("v_a0 = h.copy()", "v_a0 = h.copy() + 1", 1)
    assert broken != text
    path.write_text(broken)
    present = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                             timeout=300, env=env, cwd=tmp_path)
    assert present.returncode == 1 and present.stdout.startswith("present"), \
        present.stdout + present.stderr


def test_the_failure_record_carries_the_script_into_the_bundle(native):
    """``failures[].sequence`` is filled from the failure, and the bundle's reproduction
    of that record is the script itself (kind ``sequence``)."""
    from conformance.certification.rendering import repro
    from conformance.session import outcomes

    with pytest.raises(AssertionError) as caught:
        _run(CATALOG["seq-stale-overlapping-output"].client(native))
    facts = outcomes.failure_facts(caught.value)
    record = {"nodeid": "conformance/test_sequences.py::t", "status": "fail_wrong_result",
              "area": "sequences", **facts}
    assert repro.kind(record) == "sequence"
    assert repro.script(record, {"platform": {"name": "cpu"}}) == facts["sequence"]["script"]
    assert repro.kind({**record, "sequence": None}) is None
