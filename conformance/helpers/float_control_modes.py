"""Platform float behaviour as a declared property: denormal handling per float width.

As Vulkan's float controls (``shaderDenormFlushToZeroFloat{16,32,64}`` /
``shaderDenormPreserveFloat{16,32,64}``), a backend declares for each float dtype
whether its *arithmetic* flushes subnormal results to a zero of the same sign
(``ftz``), treats subnormal inputs as such zeros (``daz``), both (``ftz+daz``) or
neither (``preserve``, IEEE 754). The suite checks that every device computes as
declared. Data movement (copies, transfers, transpose, broadcast...) never flushes,
whatever is declared: the data_movement and transfer areas compare bits.

Declarations (``--float-controls``):

- ``auto`` (default): :data:`XLA_CPU` for jaxlib's built-in CPU client (not a PJRT C API
  plugin), :data:`IEEE` for every other client;
- a preset name: ``ieee`` or ``xla-cpu`` (a plugin that ships XLA's CPU compiler);
- ``dtype=mode`` pairs, comma-separated, over ``ieee``: ``float32=ftz+daz,float64=ftz``.

The declaration is resolved once per session (:meth:`conformance.session.session_state.SessionState.
float_controls`, the ``float_controls`` fixture) and passed, resolved, into every check that
may accept a flushed subnormal: :func:`flushes_results_of`, :func:`flushes_inputs_of`,
:func:`underflow_loss` and :func:`flushed` answer for a dtype (complex dtypes follow their
parts; a format the declaration does not cover, fp8, is taken as flushing, as before
declarations existed), and :func:`conformance.helpers.tolerances.bound` takes it as
``controls``. Under :data:`IEEE` no check accepts a flushed subnormal.

:data:`XLA_CPU` was measured on jaxlib 0.10.2 and 0.12.0.1 (``x * 0.5`` of the smallest
normal, ``s * 4`` of a subnormal ``s``): bfloat16, float32 and float64 flush both inputs
and results; float16 (computed in float32, then rounded) keeps both. XLA's CPU client sets
FTZ/DAZ on purpose (jax-ml/jax#37762, closed as intended behaviour).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np

#: Float dtype names a declaration covers (complex types follow their parts).
WIDTHS = ("bfloat16", "float16", "float32", "float64")
MODES = ("preserve", "ftz", "daz", "ftz+daz")
AUTO = "auto"


@dataclasses.dataclass(frozen=True)
class FloatControls:
    """Declared denormal mode (one of :data:`MODES`) per float dtype name of
    :data:`WIDTHS`; ``source`` says where the declaration came from (for messages)."""

    modes: Mapping[str, str]
    source: str

    def __post_init__(self) -> None:
        if set(self.modes) != set(WIDTHS):
            raise ValueError(f"FloatControls: argument 'modes' must cover exactly {WIDTHS}, "
                             f"got {sorted(self.modes)}")
        bad = {k: v for k, v in self.modes.items() if v not in MODES}
        if bad:
            raise ValueError(f"FloatControls: unknown mode(s) {bad}; known: {MODES}")

    def mode(self, dtype_name: str) -> str:
        """The declared mode of ``dtype_name``; KeyError naming the known widths."""
        if dtype_name not in self.modes:
            raise KeyError(f"no float-controls declaration for {dtype_name!r}; "
                           f"declared widths: {WIDTHS}")
        return self.modes[dtype_name]

    def flushes_results(self, dtype_name: str) -> bool:
        return "ftz" in self.mode(dtype_name)

    def flushes_inputs(self, dtype_name: str) -> bool:
        return "daz" in self.mode(dtype_name)

    def describe(self) -> str:
        """``'bfloat16=ftz+daz, float16=preserve, ... (xla-cpu)'``."""
        return ", ".join(f"{w}={self.modes[w]}" for w in WIDTHS) + f" ({self.source})"


IEEE = FloatControls({w: "preserve" for w in WIDTHS}, "ieee")
XLA_CPU = FloatControls({"bfloat16": "ftz+daz", "float16": "preserve", "float32": "ftz+daz",
                         "float64": "ftz+daz"}, "xla-cpu")
PRESETS = {"ieee": IEEE, "xla-cpu": XLA_CPU}


def parse(value: str) -> FloatControls | None:
    """A ``--float-controls`` value: ``auto`` (None: decided per client by
    :func:`for_platform`), a preset name of :data:`PRESETS`, or ``dtype=mode`` pairs over
    :data:`IEEE`. Raises ValueError naming the option and the bad part."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"--float-controls: expected {AUTO!r}, a preset ({', '.join(PRESETS)}) "
                         f"or dtype=mode pairs, got {value!r}")
    text = value.strip()
    if text == AUTO:
        return None
    if text in PRESETS:
        return PRESETS[text]
    modes = dict(IEEE.modes)
    for part in (p.strip() for p in text.split(",")):
        name, sep, mode = part.partition("=")
        name, mode = name.strip(), mode.strip()
        if not sep or name not in WIDTHS or mode not in MODES:
            raise ValueError(f"--float-controls: {part!r} is not dtype=mode with dtype one of "
                             f"{', '.join(WIDTHS)} and mode one of {', '.join(MODES)} (or use "
                             f"{AUTO!r} or a preset: {', '.join(PRESETS)})")
        modes[name] = mode
    return FloatControls(modes, text)


def for_platform(declared: FloatControls | None, platform: str | None,
                 using_pjrt_c_api: bool) -> FloatControls:
    """The declaration in force: ``declared`` if given, else (``auto``) :data:`XLA_CPU` for
    jaxlib's built-in CPU client and :data:`IEEE` for any other (a plugin declares its
    own), from the client's facts: its ``platform`` name and whether it is a PJRT C API
    plugin's client (``using_pjrt_c_api``). The session calls it once
    (:meth:`conformance.session.session_state.SessionState.float_controls`)."""
    if declared is not None:
        return declared
    if platform == "cpu" and not using_pjrt_c_api:
        return dataclasses.replace(XLA_CPU, source="auto: jaxlib's built-in CPU client")
    return dataclasses.replace(IEEE, source="auto: no declaration")


def width_of(dtype: Any) -> str | None:
    """The declared width whose mode ``dtype``'s arithmetic follows: its name, a complex
    dtype's component name; None for a format the declaration does not cover (fp8, the
    sub-byte floats) and for non-float dtypes."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        dt = np.dtype(f"f{dt.itemsize // 2}")
    return dt.name if dt.name in WIDTHS else None


def flushes_results_of(controls: FloatControls, dtype: Any) -> bool:
    """True where ``controls`` lets ``dtype``'s arithmetic flush a subnormal result (FTZ);
    a float format outside :data:`WIDTHS` counts as flushing (undeclared)."""
    width = width_of(dtype)
    return controls.flushes_results(width) if width else is_float(dtype)


def flushes_inputs_of(controls: FloatControls, dtype: Any) -> bool:
    """True where ``controls`` lets ``dtype``'s arithmetic read a subnormal input as zero
    (DAZ); a float format outside :data:`WIDTHS` counts as flushing (undeclared)."""
    width = width_of(dtype)
    return controls.flushes_inputs(width) if width else is_float(dtype)


def is_float(dtype: Any) -> bool:
    """True for a real float dtype of NumPy or ml_dtypes (bfloat16, fp8: kind ``V``)."""
    dt = np.dtype(dtype)
    if dt.kind in "biuSUOM":
        return False
    try:
        ml_dtypes.finfo(dt)
    except (TypeError, ValueError):
        return False
    return True


def underflow_loss(controls: FloatControls, dtype: Any) -> float:
    """Absolute error one rounding (or one input) of ``dtype`` may lose to underflow under
    ``controls``: the smallest normal ``tiny`` where the mode flushes results or inputs (a
    subnormal becomes 0), else half the smallest subnormal (IEEE 754 gradual underflow
    rounds to the subnormal grid). TypeError for a non-float dtype."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        dt = np.dtype(f"f{dt.itemsize // 2}")
    if not is_float(dt):
        raise TypeError(f"underflow_loss: argument 'dtype' must be a float or complex dtype, "
                        f"got {dt}")
    fi = ml_dtypes.finfo(dt)
    if flushes_results_of(controls, dt) or flushes_inputs_of(controls, dt):
        return float(fi.tiny)
    return float(fi.smallest_subnormal) / 2


def flushed(x: np.ndarray, controls: FloatControls, *, inputs: bool) -> np.ndarray:
    """``x`` as ``controls`` lets ``x.dtype``'s arithmetic see it: subnormals replaced by
    zeros of their sign where the mode flushes inputs (``inputs=True``, DAZ) or results
    (``inputs=False``, FTZ); ``x`` itself (the same object) where it does not flush, and
    for non-float arrays. Complex arrays flush part by part."""
    x = np.asarray(x)
    if not is_float(x.dtype):
        return x
    flushes = flushes_inputs_of(controls, x.dtype) if inputs \
        else flushes_results_of(controls, x.dtype)
    if not flushes:
        return x
    if x.dtype.kind == "c":
        out = x.copy()
        out.real, out.imag = _flush(x.real), _flush(x.imag)
        return out
    return _flush(x)


def _flush(x: np.ndarray) -> np.ndarray:
    w = np.abs(x.astype(np.float64))
    sub = (w != 0) & (w < float(ml_dtypes.finfo(x.dtype).tiny))
    return np.where(sub, np.copysign(np.zeros_like(x), x), x).astype(x.dtype)


def record(controls: FloatControls) -> dict[str, Any]:
    """The declaration as report.json's ``float_controls``: ``{"modes": {dtype name: mode},
    "source": where it came from}``."""
    return {"modes": {w: controls.modes[w] for w in WIDTHS}, "source": controls.source}


def expected(x: np.ndarray, exact: np.ndarray, controls: FloatControls, flushed_input: bool
             ) -> np.ndarray:
    """What a probe's result must be under ``controls``: ``exact`` (the IEEE result, same
    dtype as ``x``), or zeros of its sign where the declared mode flushes. ``flushed_input``
    says the probe's subnormal is its input ``x`` (a DAZ probe) rather than its result (an
    FTZ probe). Raises TypeError for a non-float ``x``."""
    dt = np.dtype(x.dtype)
    if dt.name not in WIDTHS:
        raise TypeError(f"expected: argument 'x' must be one of {WIDTHS}, got {dt}")
    flushes = controls.flushes_inputs(dt.name) if flushed_input \
        else controls.flushes_results(dt.name)
    if not flushes:
        return exact
    tiny = float(ml_dtypes.finfo(dt).smallest_normal)
    probe = np.abs((x if flushed_input else exact).astype(np.float64))
    zero = np.copysign(0.0, exact.astype(np.float64)).astype(dt)
    return np.where((probe > 0) & (probe < tiny), zero, exact)
