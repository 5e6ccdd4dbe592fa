"""A test's drawn examples depend on the test, its profile and its seed, not on what else
the run imported (``hypothesis_profiles.draw_without_local_constants``).

Hypothesis (6.131 and later) may take one primitive draw in 20 from the literals of
every "local" module imported so far. Before the fix, the derandomized ``ci`` case
``test_reduce[sum-int32]`` drew different arrays in a run that collected one module and in
one that collected four, so a failure of the main job did not always come back under
its one-test rerun command (that run: tests/test_derandomized_draws.py). The first test
shows the check can fail: with the pool on, importing a local module with literals
changes the draws; the second that with the suite's setting it changes nothing.
"""

from __future__ import annotations

import json

import pytest

from conformance.processes import runner

#: A local module with literals no strategy draws on its own.
LITERALS = "MAGIC = [918273645, 192837465, 564738291, 746352819, 283746519]\n"
MAGIC = {918273645, 192837465, 564738291, 746352819, 283746519}

#: Draws 2,000 integers of a derandomized test; argv: pool ("on" or "off"), import ("with"
#: or "without" the local module). Prints them as JSON, and whether the pool was found.
DRAWS = """
import json, sys
from hypothesis import given, settings, strategies as st
from conformance.session import hypothesis_profiles
found = hypothesis_profiles.draw_without_local_constants() if sys.argv[1] == "off" else None
if sys.argv[2] == "with":
    import magic_literals
drawn = []
@settings(derandomize=True, database=None, max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**31), min_size=10, max_size=10))
def draw(xs):
    drawn.extend(xs)
draw()
print(json.dumps({"found": found, "drawn": drawn}))
"""


def _draws(tmp_path, pool: str, imported: str) -> dict:
    (tmp_path / "magic_literals.py").write_text(LITERALS)
    child = runner.run_python(DRAWS, [pool, imported], timeout=300, cwd=tmp_path,
                              env=runner.child_env({"PYTHONPATH": str(tmp_path)}))
    assert child.returncode == 0, child.stdout + child.stderr
    return json.loads(child.stdout.strip().splitlines()[-1])


def test_with_the_pool_on_an_imported_module_changes_the_draws(tmp_path):
    """The self-test of the check below: Hypothesis' pool draws the local literals."""
    if not _draws(tmp_path, "off", "without")["found"]:
        pytest.skip("this Hypothesis has no pool of local constants: nothing to turn off")
    without = _draws(tmp_path, "on", "without")["drawn"]
    with_module = _draws(tmp_path, "on", "with")["drawn"]
    assert MAGIC & set(with_module), "the pool never drew the module's literals"
    assert without != with_module


def test_with_the_pool_off_an_imported_module_changes_nothing(tmp_path):
    without = _draws(tmp_path, "off", "without")
    with_module = _draws(tmp_path, "off", "with")
    assert not MAGIC & set(with_module["drawn"])
    assert with_module["drawn"] == without["drawn"]
