"""The Hypothesis profiles of the suite: ``ci`` (the default), ``dev``, ``nightly``.

Choose one with Hypothesis' own ``--hypothesis-profile``. The plugin registers them,
and loads ``ci`` when none is chosen, only in a conformance run
(:mod:`conformance.session.activation`): another project's pytest run in the same
environment keeps Hypothesis' own defaults.

In a conformance run a test's drawn examples depend on the test, the profile and the
seed only, not on which modules the run imported (:func:`draw_without_local_constants`):
a failure of the main job redraws under its one-test rerun command.
"""

from __future__ import annotations

import hypothesis

PROFILES = {
    # The explain phase traces every line after a failure; in long runs it left the
    # interpreter in a state where later tests hit RecursionError, so ci skips it.
    "ci": dict(derandomize=True, database=None, deadline=None, print_blob=True, max_examples=8,
               phases=[p for p in hypothesis.Phase if p.name != "explain"],
               suppress_health_check=[hypothesis.HealthCheck.too_slow]),
    # dev and nightly draw from random seeds on purpose: derandomize=False explicitly, or
    # under CI=true they would inherit Hypothesis' own derandomized ci settings and ignore
    # --hypothesis-seed (the scheduled random-seed job would repeat one draw forever).
    "dev": dict(derandomize=False, deadline=None, print_blob=True, max_examples=25),
    "nightly": dict(derandomize=False, deadline=None, print_blob=True, max_examples=500,
                    suppress_health_check=[hypothesis.HealthCheck.too_slow]),
}
DEFAULT_PROFILE = "ci"


def register(explicit: bool | str | None) -> None:
    """Register :data:`PROFILES`; load ``ci`` unless a profile was chosen (``explicit``:
    its name, or True). Raises ValueError naming ``--hypothesis-profile`` and the
    registered profiles when the chosen name is not one (Hypothesis' own plugin would
    raise InvalidArgument from pytest_configure: an INTERNALERROR)."""
    for name, kwargs in PROFILES.items():
        hypothesis.settings.register_profile(name, **kwargs)
    if not explicit:
        hypothesis.settings.load_profile(DEFAULT_PROFILE)
    elif isinstance(explicit, str):
        try:
            hypothesis.settings.get_profile(explicit)
        except hypothesis.errors.InvalidArgument:
            raise ValueError(f"--hypothesis-profile={explicit}: no such Hypothesis profile; "
                             f"the suite's: {', '.join(PROFILES)}") from None


def draw_without_local_constants() -> bool:
    """Turn off Hypothesis' pool of *local constants*, so that a test draws the same
    examples whatever else the run imported. Returns True when this Hypothesis has the
    pool (6.131 and later; it is off now), False when it has none (nothing to do).

    With the pool, one primitive draw in 20 may take a literal out of the source of any
    "local" module imported so far (a file outside site-packages and the standard
    library). Which modules those are depends on the collection (the whole suite, or the
    one-test rerun command of a failure), on the tests an xdist worker ran before, and on
    the install (``pip install .`` puts the suite in site-packages, a clone does not): the
    same derandomized ``ci`` case, ``test_reduce[sum-int32]``, drew an int32[31692] in a
    run that collected one module and an int32[0, 4] in one that collected four. Hypothesis'
    own global constants (0, -0.0, the extremes, NaN and infinities) are kept; the suite's
    strategies draw its boundary values themselves. Self-test:
    tests/test_hypothesis_draws.py."""
    from hypothesis.internal.conjecture import providers
    if not hasattr(providers, "_get_local_constants"):
        return False
    from hypothesis.internal.constants_ast import Constants
    empty = Constants()
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE.cache.clear()     # choices made from an earlier pool
    return True
