"""The conformance modules a pytest ``-k`` expression can select, so that a child run
collects those modules only (``--pyargs conformance.test_a conformance.test_b``) and not
the whole suite: a child of one module starts about 1 s sooner (2.7 -> 1.9 s on the
2-core CI machine), and the self-tests start ~100 children.

An identifier of ``-k`` matches an item when it is a case-insensitive substring of one of
its keywords (its name, its module ``test_x.py``, its class, marks, parameters). Only an
identifier ending in ``.py`` is taken as a module name (true for the modules whose file
name holds it, false elsewhere); every other identifier may be either. The expression is
evaluated in three-valued logic (Kleene: unknown where it depends on those), so a module
is kept unless the expression is false for every item of it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import conformance

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_UNKNOWN = None


def _tokens(expression: str) -> list[str]:
    found, pos = [], 0
    while pos < len(expression):
        m = _TOKEN.match(expression, pos)
        if m is None:
            break
        found.append(m.group(1))
        pos = m.end()
    return found


def _value(token: str, module_file: str) -> bool | None:
    if token.lower().endswith(".py"):
        return token.lower() in module_file.lower()
    return _UNKNOWN


def possible(expression: str, module_file: str) -> bool:
    """False only when ``expression`` (pytest ``-k`` syntax) is false for every item of
    the module file ``module_file`` (``test_x.py``). Raises ValueError for an expression
    it cannot parse (unbalanced parentheses, a dangling operator)."""
    tokens = _tokens(expression)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError(f"-k expression {expression!r} ends early")
        pos += 1
        return tokens[pos - 1]

    def disjunction() -> bool | None:
        value = conjunction()
        while peek() == "or":
            take()
            right = conjunction()
            value = True if True in (value, right) else (
                _UNKNOWN if _UNKNOWN in (value, right) else False)
        return value

    def conjunction() -> bool | None:
        value = negation()
        while peek() == "and":
            take()
            right = negation()
            value = False if False in (value, right) else (
                _UNKNOWN if _UNKNOWN in (value, right) else True)
        return value

    def negation() -> bool | None:
        if peek() == "not":
            take()
            value = negation()
            return _UNKNOWN if value is _UNKNOWN else not value
        token = take()
        if token == "(":
            value = disjunction()
            if take() != ")":
                raise ValueError(f"-k expression {expression!r}: unbalanced parentheses")
            return value
        if token in (")", "and", "or"):
            raise ValueError(f"-k expression {expression!r}: unexpected {token!r}")
        return _value(token, module_file)

    value = disjunction()
    if pos != len(tokens):
        raise ValueError(f"-k expression {expression!r}: unexpected {tokens[pos]!r}")
    return value is not False


def narrowed(expression: str, module_files: Iterable[str]) -> list[str]:
    """The files of ``module_files`` that ``expression`` can select (see :func:`possible`),
    in their order."""
    return [f for f in module_files if possible(expression, f)]


def pyargs(expression: str | None) -> list[str]:
    """The ``--pyargs`` targets of a child run selecting ``expression`` (``-k``; None for
    none): the conformance modules it can select, or the whole package ``conformance``
    when it may select any (or none)."""
    files = sorted(p.name for p in Path(conformance.__file__).parent.glob("test_*.py"))
    keep = narrowed(expression, files) if expression else files
    if not keep or len(keep) == len(files):
        return ["conformance"]
    return [f"conformance.{f.removesuffix('.py')}" for f in keep]


def pyargs_of(select: Sequence[str]) -> list[str]:
    """:func:`pyargs` of a child's pytest arguments ``select``: of the expression after
    its one ``-k``, or of none (the whole package) when ``select`` has no ``-k`` or more
    than one."""
    return pyargs(select[select.index("-k") + 1] if list(select).count("-k") == 1 else None)
