"""Mutation operator ``jaxlib_api``: optional PJRT features answered wrongly.

An ``UNIMPLEMENTED`` answer is a correct backend (``not_supported``), so it is not a
mutant here: :class:`CostAnalysisUnimplemented` is used by ``tests/test_optional_features.py``
as a healthy backend that lacks the feature. Another error, or a wrong answer, must fail.
"""

from __future__ import annotations

from typing import Any

from runtime._client import Client
from runtime.xla_client import XlaRuntimeError
from tests.mutants.catalog import add


class _CostExecutable:
    """A loaded executable whose ``cost_analysis`` is replaced by ``answer()``."""

    def __init__(self, exe: Any, answer: Any):
        self._exe, self._answer = exe, answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._exe, name)

    def cost_analysis(self) -> Any:
        return self._answer()


class _CostClient(Client):
    def answer(self, exe: Any) -> Any:
        """The replaced ``cost_analysis()`` of the real executable ``exe``."""
        raise NotImplementedError

    def compile_and_load(self, *args: Any, **kwargs: Any) -> Any:
        exe = super().compile_and_load(*args, **kwargs)
        return _CostExecutable(exe, lambda: self.answer(exe))


class CostAnalysisUnimplemented(_CostClient):
    """cost_analysis answers UNIMPLEMENTED (a correct backend without the feature)."""

    def answer(self, exe: Any) -> Any:
        raise XlaRuntimeError("UNIMPLEMENTED: GetCostAnalysis is not implemented.")


class CostAnalysisInternalError(_CostClient):
    """cost_analysis raises INTERNAL (an error, not a missing feature)."""

    def answer(self, exe: Any) -> Any:
        raise XlaRuntimeError("INTERNAL: cost model failed")


class CostAnalysisGarbage(_CostClient):
    """cost_analysis returns a list of nonsense instead of a dict of costs."""

    def answer(self, exe: Any) -> Any:
        return ["flops", -1]


class CostAnalysisWrongFlops(_CostClient):
    """cost_analysis reports 10x the flops of the program."""

    def answer(self, exe: Any) -> Any:
        cost = dict(exe.cost_analysis())
        cost["flops"] = cost.get("flops", 1.0) * 10
        return cost


_TARGET = "test_executables: test_cost_analysis"
add("opt-cost-analysis-internal-error", "jaxlib_api", CostAnalysisInternalError, _TARGET)
add("opt-cost-analysis-garbage", "jaxlib_api", CostAnalysisGarbage, _TARGET)
add("opt-cost-analysis-wrong-flops", "jaxlib_api", CostAnalysisWrongFlops, _TARGET)
