"""The Hypothesis profiles of the suite: ``ci`` (the default), ``dev``, ``nightly``.

Choose one with Hypothesis' own ``--hypothesis-profile``. The plugin registers them,
and loads ``ci`` when none is chosen, only in a conformance run
(:mod:`conformance.session.activation`): another project's pytest run in the same
environment keeps Hypothesis' own defaults.
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
