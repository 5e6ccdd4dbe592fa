"""Mutation operator ``output`` for declared float controls: a backend whose devices
disagree about denormals.

- the last device computes the denormal probes of ``test_denormals_as_declared`` with
  IEEE 754 subnormals (no FTZ/DAZ) while the others flush, as a client whose worker
  threads do not all set the FTZ/DAZ bits would.
"""

from __future__ import annotations

import numpy as np

from tests.mutants.base import Site, is_float, transforming
from tests.mutants.catalog import add


def ieee_on_last_device(site: Site, inputs, outputs):
    """Denormal probes (programs ``denormals_*``, one multiply) on the last device return
    the IEEE 754 product: subnormals neither flushed nor read as zero."""
    if not site.program.startswith("denormals_") or site.index != site.count - 1 \
            or len(inputs) != 2 or not all(is_float(a) for a in inputs):
        return outputs
    exact = (inputs[0].astype(np.float64) * inputs[1].astype(np.float64))
    return [exact.astype(o.dtype) if o.shape == exact.shape else o for o in outputs]


def _register():
    add("out-denormals-ieee-last-device", "output",
        transforming(ieee_on_last_device, ieee_on_last_device.__doc__),
        "test_kernels_elementwise: test_denormals_as_declared and (float32 or float64)")


_register()
