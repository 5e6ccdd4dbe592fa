"""No literal tolerances outside the tolerance table (issue 34 item 6).

Every allowed error comes from :func:`conformance.helpers.tolerances.bound`; the numbers
live in :mod:`conformance.helpers.tolerances` only. :func:`violations` parses each Python
file under ``conformance/`` with :mod:`ast` (comments and docstrings never count) and
reports:

- ``literal keyword``: a call passing a tolerance keyword (``rtol=``, ``atol=``,
  ``max_ulp=``, ``threshold=``, ``eps=``, ``bound=``, ...) a value that holds a numeric
  literal (``rtol=1e-5``, ``atol=2 * eps``, ``max_ulp=0``);
- ``literal argument``: a float literal passed to an assertion helper (``assert_*``,
  ``allclose``, ``isclose``, ``approx``) as a tolerance: positionally where the helper's
  parameter is a tolerance (the signatures of :mod:`conformance.helpers.assertions`), or
  as a bare literal argument of a helper whose signature is unknown
  (``np.testing.assert_allclose(a, b, 1e-5)``);
- ``literal default``: a function whose tolerance parameter defaults to a non-zero
  literal (``def check(..., threshold=30.0)``);
- ``table bypass`` (test files, ``conformance/test_*.py``, only): a test that reads the
  table or the error-bound builders directly (``tolerances.ulp_bound``,
  ``error_bounds.rounding_bound``, ``ulp.rtol``, ``dtype_helpers.tolerance``...) instead of
  ``tolerances.bound``.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from conformance.helpers import assertions

ROOT = Path(__file__).resolve().parent.parent / "conformance"
#: The tolerance table: the one module allowed to hold the numbers.
TABLE = {ROOT / "helpers" / "tolerances.py"}
#: Keyword names that carry an allowed error in any call.
TOLERANCE_NAMES = frozenset({"rtol", "atol", "max_ulp", "ulp", "ulps", "tol", "tolerance",
                             "abs_tol", "rel_tol"})
#: ... and those that do in an assertion helper's call or signature (elsewhere
#: ``threshold=`` is e.g. ``np.array2string``'s).
HELPER_TOLERANCE_NAMES = TOLERANCE_NAMES | {"threshold", "eps", "bound"}
#: The entry point: what it is called with is the derivation (``roundings=2 * n``), not a
#: tolerance; its own numbers are checked in the table.
_ENTRY_POINT = "bound"
#: Calls that compare with a tolerance besides the ``assert_*`` helpers.
_COMPARERS = frozenset({"allclose", "isclose", "approx"})
#: The module of the suite's own assertion helpers.
_ASSERTIONS = "conformance.helpers.assertions"
#: Parameter names of the suite's own assertion helpers, by position.
_SIGNATURES = {name: [p.name for p in inspect.signature(fn).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
               for name, fn in vars(assertions).items()
               if name.startswith("assert_") and inspect.isfunction(fn)}
#: What a test file may use of the modules behind ``tolerances.bound``: module -> names.
_ALLOWED_IN_TESTS = {
    "conformance.helpers.tolerances": {"bound", "Bound"},
    "conformance.helpers.error_bounds": {"ErrorBound", "integral_terms", "float_limits"},
    "conformance.helpers.ulp": {"ulp_distance", "ordered_bits", "is_subnormal",
                                "flush_subnormals"},
    "conformance.helpers.dtype_helpers": None,   # None: everything but the names below
}
_FORBIDDEN_IN_TESTS = {"conformance.helpers.dtype_helpers": {"tolerance"}}


def _numeric(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and not isinstance(node.value, bool)
            and isinstance(node.value, (int, float, complex)))


def _literals(node: ast.AST, *, floats_only: bool) -> list[ast.Constant]:
    """Numeric literals in ``node`` outside subscripts (``a[..., :1]`` indexes, it
    allows nothing), keyword arguments of nested calls (``x.max(initial=0)``) and calls
    of the entry point ``tolerances.bound``."""
    found: list[ast.Constant] = []

    def walk(n: ast.AST) -> None:
        if isinstance(n, ast.Subscript):
            walk(n.value)   # the index is no tolerance
            return
        if isinstance(n, ast.Call):
            if _callee(n) == _ENTRY_POINT:
                return
            for child in [n.func, *n.args]:
                walk(child)
            return
        if _numeric(n) and (not floats_only or isinstance(n.value, float)):
            found.append(n)   # type: ignore[arg-type]
        for child in ast.iter_child_nodes(n):
            walk(child)
    walk(node)
    return found


def _bare(node: ast.AST) -> bool:
    """A literal, a signed literal, or arithmetic of literals only (``1e-5``, ``-0.5``,
    ``2 * 1e-6``) holding a float."""
    if isinstance(node, ast.UnaryOp):
        return _bare(node.operand)
    if isinstance(node, ast.BinOp):
        return all(_numeric(x) or _bare(x) for x in (node.left, node.right)) and bool(
            _literals(node, floats_only=True))
    return _numeric(node) and isinstance(node.value, float)


def _callee(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _modules(tree: ast.AST) -> dict[str, str]:
    """Local name -> module it is bound to, for ``import a.b as x`` and
    ``from a import b as x``."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else \
                    a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _bypasses(tree: ast.AST) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    modules = _modules(tree)

    def check(module: str, name: str, line: int) -> None:
        allowed = _ALLOWED_IN_TESTS.get(module, ())
        if module in _ALLOWED_IN_TESTS and (
                (allowed is not None and name not in allowed)
                or name in _FORBIDDEN_IN_TESTS.get(module, ())):
            found.append((line, f"table bypass: {module.rsplit('.', 1)[1]}.{name}; "
                                f"use tolerances.bound(...)"))

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in modules:
            check(modules[node.value.id], node.attr, node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module in _ALLOWED_IN_TESTS:
            for a in node.names:
                check(node.module, a.name, node.lineno)
    return found


def violations(path: Path, *, test_file: bool | None = None) -> list[str]:
    """``'path:line: what'`` for every literal tolerance in the Python file ``path`` (see
    the module docstring); ``test_file`` (default: the name starts with ``test_``) adds
    the table-bypass rule. SyntaxError for a file that does not parse."""
    tree = ast.parse(path.read_text(), filename=str(path))
    modules = _modules(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _callee(node)
            helper = name.startswith("assert_") or name in _COMPARERS
            names = HELPER_TOLERANCE_NAMES if helper else TOLERANCE_NAMES
            for kw in node.keywords:
                if kw.arg in names and _literals(kw.value, floats_only=False):
                    found.append((kw.value.lineno, f"literal keyword: {kw.arg}="
                                  f"{ast.unparse(kw.value)}"))
            if not helper:
                continue
            params = _SIGNATURES.get(name) if isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and \
                modules.get(node.func.value.id) == _ASSERTIONS \
                or (isinstance(node.func, ast.Name) and name in _SIGNATURES) else None
            for i, arg in enumerate(node.args):
                if params is not None:
                    if i < len(params) and params[i] in HELPER_TOLERANCE_NAMES \
                            and _literals(arg, floats_only=False):
                        found.append((arg.lineno, f"literal argument: {params[i]} "
                                      f"{ast.unparse(arg)} to {name}"))
                elif _bare(arg):
                    found.append((arg.lineno, f"literal argument: {ast.unparse(arg)} to "
                                  f"{name}"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = a.posonlyargs + a.args
            pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
            pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            for param, default in pairs:
                if param.arg in HELPER_TOLERANCE_NAMES and any(
                        lit.value != 0 for lit in _literals(default, floats_only=False)):
                    found.append((default.lineno, f"literal default: {param.arg}="
                                  f"{ast.unparse(default)}"))
    if test_file if test_file is not None else path.name.startswith("test_"):
        found += _bypasses(tree)
    return [f"{path}:{line}: {what}" for line, what in sorted(set(found))]


def _checked_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if p not in TABLE)


def test_no_literal_tolerance_under_conformance():
    """Every file under conformance/ but the table: tolerances come from
    ``tolerances.bound``."""
    files = _checked_files()
    assert len(files) > 100 and ROOT / "test_kernels_elementwise.py" in files
    found = [v for p in files for v in violations(p)]
    assert not found, "literal tolerances outside conformance/helpers/tolerances.py " \
        "(add the number to the table and get it with tolerances.bound):\n" + "\n".join(found)


PLANTED = {
    "rtol keyword": 'assertions.assert_allclose(out, want, rtol=1e-5, atol=tol.atol, call="c")\n',
    "atol arithmetic": "assertions.assert_ulp_close(out, want, max_ulp=tol.max_ulp, atol=2 * eps, "
    "call='c')\n",
    "max_ulp zero": "assertions.assert_ulp_close(out, want, max_ulp=0, call='c')\n",
    "bound array": "assertions.assert_within_bound(out, want, np.full(out.shape, 64 * eps), "
    "bound_name='b', call='c')\n",
    "numpy positional": "np.testing.assert_allclose(out, want, 1e-5)\n",
    "isclose": "assert np.isclose(out, want, 1e-6).all()\n",
    "default": "def check(out, want, *, threshold=30.0):\n    pass\n",
    "bypass": "from conformance.helpers import tolerances\n"
    "k = tolerances.ulp_bound('exp', 'float32')\n",
    "bypass import": "from conformance.helpers.error_bounds import rounding_bound\n",
    "dtype rtol": "from conformance.helpers import dtype_helpers\n"
                  "r = dtype_helpers.tolerance(dt)\n",
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_planted_literal_tolerance_fails(tmp_path, name):
    """The check of the check: each way of writing a literal tolerance, planted in a temp
    test file, is reported with its line."""
    path = tmp_path / "test_planted.py"
    path.write_text("import numpy as np\nfrom conformance.helpers import assertions\n\n"
                    + PLANTED[name])
    found = violations(path)
    assert found and all(v.startswith(f"{path}:") for v in found), (name, found)
    assert any(":4: " in v or ":5: " in v for v in found), found


def test_comments_docstrings_and_table_calls_do_not_count(tmp_path):
    path = tmp_path / "test_clean.py"
    path.write_text('''"""Held to rtol=1e-5 (a docstring)."""
import numpy as np
from conformance.helpers import assertions
from conformance.helpers import tolerances


def check(out, want, controls, atol=0.0):  # a zero default adds nothing
    """assertions.assert_allclose(out, want, rtol=1e-5, atol=1e-5)"""
    # assertions.assert_allclose(out, want, rtol=1e-5)
    tol = tolerances.bound("value", want.dtype, op="exp", scale=np.max(np.abs(want)))
    assertions.assert_allclose(out[..., :1], want[..., :1], rtol=tol.rtol, atol=tol.atol, call="c")
    assertions.assert_residual_ratio(out - want, 1.0, n=4,
                                     bound=tolerances.bound("residual", out.dtype),
                                     what="r", call="c")
    assertions.assert_within_bound(out, want, tolerances.bound(
        "rounding", want.dtype, magnitude=np.abs(want), roundings=2 * 3, controls=controls,
        name="6*eps*|want|"), call="c")
''')
    assert violations(path) == []


def test_the_table_itself_holds_numbers():
    """The table is exempt because it is where the numbers live: checked, it would fail."""
    (table,) = TABLE
    assert violations(table, test_file=False), "the table no longer holds any number?"
