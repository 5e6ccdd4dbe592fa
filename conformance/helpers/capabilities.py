"""Capability gating: undeclared features must fail gracefully, never wrongly.

An error (exception) from the backend for a dtype of a capability module
(bf16, f16, f64, fp8, complex, int4) is reported as ``not_supported``; for a
core dtype it is a failure. Wrong results are never gated: only the calls inside
``gated`` are, not the comparisons.

Optional PJRT features (:data:`OPTIONAL_FEATURES`: cost analysis, memory stats,
compile-only ``compile``, serialization, custom-call registration) are
capabilities too: inside :func:`optional_feature`, an ``UNIMPLEMENTED`` answer
(or ``NotImplementedError``) is ``not_supported`` naming the feature; any other
error, and any wrong answer, stays a failure.

A custom call the *framework* failed to register with a plugin client (the
LAPACK/sparse FFI targets, see ``runtime._plugin_ffi``) is neither: inside
``gated`` and ``optional_feature`` it becomes :class:`FrameworkGap`, a failure
whose message starts with ``runtime.plugin_support.FRAMEWORK_MARKER``.

``not_supported`` travels as the exception type :class:`NotSupported` (a pytest
skip), which the plugin classifies by type; its message is for people only.

A test declares what it needs with ``pytest.mark.capability(...)``, most simply through
:func:`requires` (``@capabilities.requires("bf16", "donation")``) or :func:`param` for a
dtype parameter: one capability or several. Its tier is then ``capability:<a>+<b>``
(mandatory once every one of them is declared, see
``conformance.certification.catalog.profiles``), and it is ``not_supported`` when any of
them is missing: before it runs where the session knows (:func:`check_required`, e.g.
``multi_device`` on a one-device platform), or when the backend cleanly refuses a call
inside :func:`gated` for any of its dtypes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NoReturn

import pytest

from conformance.helpers import dtype_helpers
from runtime.plugin_support import missing_target_reason
from runtime.xla_client import XlaRuntimeError

#: The status name, also the first word of a NotSupported message.
NOT_SUPPORTED = "not_supported"
_GRACEFUL = (XlaRuntimeError, NotImplementedError, TypeError, ValueError)
#: Optional PJRT features the suite probes -> what the probe calls.
OPTIONAL_FEATURES = {
    "cost_analysis": "LoadedExecutable.cost_analysis (PJRT_Executable_GetCostAnalysis)",
    "memory_stats": "Device.memory_stats / get_compiled_memory_stats",
    "compile_only": "Client.compile without loading (PJRT_Compile)",
    "serialization": "serialize_executable / deserialize_executable",
    "custom_calls": "custom-call (FFI) target registration",
}
#: A feature's own "not implemented" answers, besides UNIMPLEMENTED: a plugin without
#: a standalone compiler answers compile-only ``compile`` with NOT_FOUND (xla-cpu-pjrt).
_FEATURE_ANSWERS = {"compile_only": ("No compiler registered for platform",)}


class NotSupported(pytest.skip.Exception):
    """A capability the backend cleanly refuses: the test's status is ``not_supported``."""


def not_supported(reason: str) -> NoReturn:
    """Skip the current test as ``not_supported`` (message ``not_supported: <reason>``)."""
    if not isinstance(reason, str) or not reason:
        raise TypeError(f"not_supported(reason=...) needs a non-empty str, got {reason!r}")
    raise NotSupported(f"{NOT_SUPPORTED}: {reason}")


class FrameworkGap(RuntimeError):
    """A failure caused by the framework, not the backend: a custom-call target jax
    lowers to that the runtime could not register with the plugin client. Status
    ``fail_error``; the message starts with ``runtime.plugin_support.FRAMEWORK_MARKER``."""


def _first_line(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def _raise_framework_gap(err: BaseException) -> None:
    """Raise :class:`FrameworkGap` (from ``err``) if ``err`` is a framework target the
    runtime could not register with a plugin client; else return."""
    reason = missing_target_reason(str(err))
    if reason is not None:
        raise FrameworkGap(f"{reason} [{_first_line(err)}]") from err


def is_unimplemented(err: BaseException, feature: str | None = None) -> bool:
    """True for a backend's "not implemented" answer: ``NotImplementedError``, or an
    ``XlaRuntimeError`` whose status is ``UNIMPLEMENTED``, whose text says "not
    implemented", or (for ``feature``) one of that feature's own answers. Other errors
    (TypeError, INTERNAL...) are not."""
    if isinstance(err, NotImplementedError):
        return True
    if not isinstance(err, XlaRuntimeError):
        return False
    text = str(err)
    return text.lstrip().startswith("UNIMPLEMENTED") or "not implemented" in text.lower() \
        or any(answer in text for answer in _FEATURE_ANSWERS.get(feature, ()))


@contextlib.contextmanager
def optional_feature(feature: str, call: str) -> Iterator[None]:
    """Turn an ``UNIMPLEMENTED`` answer of optional PJRT ``feature`` (a key of
    :data:`OPTIONAL_FEATURES`) into ``not_supported: optional feature <feature>: ...``.
    Other errors propagate (a failure); ``call`` says what was called. Raises
    ValueError for an unknown ``feature``."""
    if feature not in OPTIONAL_FEATURES:
        raise ValueError(f"optional_feature: argument 'feature' must be one of "
                         f"{sorted(OPTIONAL_FEATURES)}, got {feature!r}")
    try:
        yield
    except Exception as err:
        _raise_framework_gap(err)
        if not is_unimplemented(err, feature):
            raise
        not_supported(f"optional feature {feature}: {call} raised {_first_line(err)}")


@contextlib.contextmanager
def gated(dt: dtype_helpers.DType | Iterable[dtype_helpers.DType], call: str) -> Iterator[None]:
    """Turn a clean backend error for a capability dtype into a ``not_supported`` skip
    (a framework gap, see :class:`FrameworkGap`, stays a failure for every dtype).
    ``dt``: one dtype, or every dtype of the call (a conversion's source and
    destinations): the error is ``not_supported`` when any of them belongs to a
    capability module, naming each; a failure when all are core."""
    dts = [dt] if isinstance(dt, dtype_helpers.DType) else list(dt)
    try:
        yield
    except _GRACEFUL as err:
        _raise_framework_gap(err)
        caps = list(dict.fromkeys(d.capability for d in dts if d.capability))
        if not caps:
            raise
        names = ", ".join(dict.fromkeys(d.name for d in dts))
        not_supported(f"capability {'+'.join(caps)} ({names}): {call} raised "
                      f"{_first_line(err)}")


def requires(*names: str) -> pytest.MarkDecorator:
    """The mark of a test that needs every capability of ``names``
    (``@capabilities.requires("bf16", "donation")``): ``pytest.mark.capability(*names)``.
    TypeError for no name or a non-str one, ValueError for a repeated one (the names are
    checked against the known capabilities at collection)."""
    if not names or not all(isinstance(n, str) and n for n in names):
        raise TypeError(f"requires: expected one or more capability names, got {names!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"requires: capability named twice in {names!r}")
    return pytest.mark.capability(*names)


def required(item: Any) -> tuple[str, ...]:
    """The capabilities a test item needs: every name of every ``capability`` mark on it
    (its own, its class's, its module's; a dtype param's), each once, closest first."""
    names = (n for mark in item.iter_markers("capability") for n in mark.args)
    return tuple(dict.fromkeys(names))


def check_required(names: Iterable[str], missing: Mapping[str, str]) -> None:
    """Raise :class:`NotSupported` when any capability of ``names`` (a test's, from
    :func:`required`) is in ``missing`` (capability -> why the backend lacks it), naming
    each missing one; return when none is."""
    needs = tuple(names)
    lacking = [f"{n} ({missing[n]})" for n in needs if n in missing]
    if lacking:
        not_supported(f"needs capabilit{'ies' if len(needs) > 1 else 'y'} "
                      f"{', '.join(needs)}; missing: {', '.join(lacking)}")


def param(dt: dtype_helpers.DType, *also: str, id: str | None = None) -> pytest.param:
    """A pytest param for ``dt`` carrying its capability marker, together with the
    capabilities ``also`` the test needs besides the dtype's (one mark, several names)."""
    names = tuple(dict.fromkeys(n for n in (dt.capability, *also) if n))
    marks = [requires(*names)] if names else []
    return pytest.param(dt, id=id or dt.name, marks=marks)


#: A compiler's clean refusal of an op it has no lowering for (XLA's MLIR -> HLO
#: translation), besides UNIMPLEMENTED.
_OP_REFUSALS = ("can't be translated to XLA HLO",)


@contextlib.contextmanager
def optional_op(op: str, call: str, enabled: bool = True) -> Iterator[None]:
    """For an op the spec has but a platform may not compile (``enabled``): turn an
    ``UNIMPLEMENTED`` answer or an untranslatable-op compile error into
    ``not_supported: op <op>: ...`` (also when :func:`gated` already made it a dtype
    capability's ``not_supported``: the op, not the dtype, is refused). Other errors
    propagate (a failure)."""
    try:
        yield
    except (XlaRuntimeError, NotSupported) as raised:
        err = raised.__context__ if isinstance(raised, NotSupported) else raised
        if not isinstance(err, XlaRuntimeError):
            raise
        _raise_framework_gap(err)
        if not enabled or not (is_unimplemented(err) or any(
                r in str(err) for r in _OP_REFUSALS)):
            raise
        not_supported(f"op {op}: {call} raised {_first_line(err)}")
