"""Which XLA compiler pass makes a program wrong: recompile it with one HLO pass disabled.

A program that fails compiled whole but passes op by op (each op its own executable) was
broken by the compiler. For an XLA-based backend (jaxlib's CPU client, the CUDA and ROCm
plugins, XLA:CPU plugins) :func:`find` names the pass, as upstream's differential
campaigns file such defects:

1. compile the program once with the debug options ``xla_dump_to`` (a temporary folder)
   and ``xla_dump_hlo_pass_re=.*`` (passed per compile in
   ``CompileOptions.env_option_overrides``, as jax's ``compiler_options`` are): XLA
   writes one HLO dump after each pass that changed the module, named
   ``module_N.<name>.<step>.<pipeline>.after_<pass>.before_<next>.txt``. Those passes,
   in order, are the candidates (but :data:`NEVER_DISABLED`: without
   ``copy-insertion`` no while loop ends); a backend that writes no dump does not
   honour the debug options, and the answer is "undecided";
2. recompile with ``xla_disable_hlo_passes=<pass>`` for each candidate, run it on the
   same device and inputs, and hold the result to the test's own oracle. The recompiles
   run in a child process (``isolated``: the session's snippet runner), since XLA aborts
   the process when a pass that a later one needs is disabled: a pass whose recompile
   kills the child counts as "still wrong", and a new child goes on with the rest;
3. the pass whose disabling makes the program pass is named, with the HLO module as it
   was before that pass first changed it. When several do, a pass is preferred over a
   pipeline that contains it (``simplification`` holds ``algsimp``), then the earliest.
   When none does, or the program passes when recompiled, the answer is "undecided":
   never a guess.

The finding is data on the failure (:func:`attach`, ``failures[].compiler_pass`` in
report.json), a line of report.md and of the failure's standalone reproduction.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from runtime import xla_client

#: The failing exception's attribute that holds a :class:`PassFinding`.
ATTRIBUTE = "pjrt_compiler_pass"
#: Characters of the HLO module before the named pass kept in the finding.
MODULE_CHARS = 6000
#: Candidate passes tried at most (each is one compile and one execute).
MAX_PASSES = 64
#: Passes never recompiled without: they make the program mean what it says rather than
#: optimize it. Without ``copy-insertion`` (the copies that keep a while loop's carried
#: buffers apart) a ``lax.fori_loop`` of ``v * 3 + 1`` never returns on XLA:CPU (jaxlib
#: 0.10.2, measured 2026-11-29), so every failing program with a loop held the search
#: to its child's timeout.
NEVER_DISABLED = frozenset({"copy-insertion"})
_DUMP = re.compile(r"^module_\d+\.[^.]+\.(\d+)\.([^.]+)\.after_([^.]+)\.before_([^.]+)\.txt$")


@dataclasses.dataclass(frozen=True)
class PassFinding:
    """``pass_name``: the HLO pass whose disabling makes the program pass (None:
    undecided); ``reason``: one sentence on how that was decided; ``tried``: the passes
    recompiled without, in pipeline order; ``fixers``: every one of them after which
    the program passed; ``module_before``: the HLO module before ``pass_name`` first
    changed it (at most :data:`MODULE_CHARS` characters), or None."""

    pass_name: str | None
    reason: str
    tried: tuple[str, ...] = ()
    fixers: tuple[str, ...] = ()
    module_before: str | None = None

    def note(self) -> str:
        """The line a failure's note and report.md show."""
        if self.pass_name is None:
            return f"compiler pass: undecided ({self.reason})"
        return f"compiler pass: {self.pass_name} ({self.reason})"

    def data(self) -> dict[str, Any]:
        """JSON data for ``failures[].compiler_pass``."""
        return {"pass": self.pass_name, "reason": self.reason, "tried": list(self.tried),
                "fixers": list(self.fixers), "module_before": self.module_before}


def _compile_run(client: Any, text: str, args: Sequence[np.ndarray], device: Any,
                 overrides: dict[str, str]) -> list[np.ndarray]:
    options = xla_client.CompileOptions()
    options.env_option_overrides = list(overrides.items())
    exe = client.compile_and_load(text, [device], options)
    buffers = [client.buffer_from_pyval(np.asarray(a), device) for a in args]
    return [np.asarray(o) for o in exe.execute(buffers)]


#: What the child runs (``client``, ``device`` bound by the snippet runner).
_SNIPPET = """
from conformance.programs import compiler_pass
compiler_pass.child_main(client, device, {folder!r})
"""


def child_main(client: Any, device: Any, folder: str) -> None:
    """The child's work in ``folder`` (``program.mlir``, ``args.npz``, ``todo.json``: the
    passes to try, or null to dump first): with ``todo`` null, compile with HLO dumps into
    ``dumps/`` and run (``dumped.npz``); then for each pass of ``todo`` in order, compile
    with it disabled and run: ``<k>.npz`` (the outputs) or ``<k>.err`` (the error), each
    written before the next is tried, so that a parent sees how far a killed child got."""
    import json

    work = Path(folder)
    text = (work / "program.mlir").read_text()
    with np.load(work / "args.npz") as saved:
        args = [saved[f"a{k}"] for k in range(len(saved.files))]
    todo = json.loads((work / "todo.json").read_text())
    if todo is None:
        (work / "dumps").mkdir(exist_ok=True)
        outs = _compile_run(client, text, args, device,
                            {"xla_dump_to": str(work / "dumps"), "xla_dump_hlo_pass_re": ".*"})
        np.savez(work / "dumped.npz", *outs)
        return
    for k, name in todo:
        try:
            outs = _compile_run(client, text, args, device, {"xla_disable_hlo_passes": name})
        except Exception as err:  # noqa: BLE001 -- the backend refused: still wrong
            (work / f"{k}.err").write_text(f"{type(err).__name__}: {str(err)[:300]}")
            continue
        np.savez(work / f"{k}.npz", *outs)


def _loaded(path: Path) -> list[np.ndarray]:
    with np.load(path) as saved:
        return [saved[f"arr_{k}"] for k in range(len(saved.files))]


def dumped_passes(folder: Path) -> tuple[list[tuple[int, str, str]], set[str]]:
    """The (step, pass, dump file) of every pass that changed the module, in step order,
    and the names of the pipelines they ran in, from an ``xla_dump_to`` folder (none when
    it does not exist)."""
    steps, pipelines = [], set()
    for path in (folder.iterdir() if folder.is_dir() else ()):
        m = _DUMP.match(path.name)
        if m and m.group(3) != "pipeline-start":
            steps.append((int(m.group(1)), m.group(3), path.name))
        if m:
            pipelines.add(m.group(2))
    return sorted(steps), pipelines


def _module_before(folder: Path, steps: list[tuple[int, str, str]], name: str) -> str | None:
    """The dump just before ``name`` first changed the module (its ``before_<name>``
    predecessor: the dump of the previous changing step, else the module's first dump)."""
    at = next(i for i, (_, p, _) in enumerate(steps) if p == name)
    earlier = sorted(p for p in folder.iterdir() if _DUMP.match(p.name)
                     and int(_DUMP.match(p.name).group(1)) < steps[at][0])
    if not earlier:
        return None
    text = max(earlier, key=lambda p: int(_DUMP.match(p.name).group(1))).read_text()
    return text if len(text) <= MODULE_CHARS else text[:MODULE_CHARS] + "\n... (cut)"


def find(isolated: Callable[..., str], text: str, args: Sequence[np.ndarray],
         passes: Callable[[list[np.ndarray]], bool], *, restarts: int = 8,
         timeout: float = 600.0) -> PassFinding:
    """Name the HLO pass that breaks the StableHLO program ``text`` (see the module):
    ``isolated(snippet, call=..., timeout=...)`` runs a snippet in a child process on the
    failing device (the ``isolated`` fixture, bound to it); ``args`` the host inputs;
    ``passes(outputs)`` the test's oracle (True when right). A child killed on a pass
    starts again after it, at most ``restarts`` times. Never raises for what the backend
    does."""
    import json

    with tempfile.TemporaryDirectory(prefix="pjrt-passes-") as tmp:
        work = Path(tmp)
        (work / "program.mlir").write_text(text)
        np.savez(work / "args.npz", **{f"a{k}": np.asarray(a) for k, a in enumerate(args)})
        (work / "todo.json").write_text("null")
        snippet = _SNIPPET.format(folder=tmp)
        try:
            isolated(snippet, call="recompile with HLO dumps", timeout=timeout)
        except AssertionError as err:  # a crash, a hang or an error: the backend's
            return PassFinding(None, f"recompiling with HLO dumps failed: "
                                     f"{str(err).splitlines()[0][:200]}")
        steps, pipelines = dumped_passes(work / "dumps")
        if not steps:
            return PassFinding(None, "the backend wrote no HLO pass dumps: it does not "
                                     "honour XLA's debug options (xla_dump_to)")
        if passes(_loaded(work / "dumped.npz")):
            return PassFinding(None, "the program passes when recompiled with HLO dumps: "
                                     "the failure does not repeat")
        order = list(dict.fromkeys(p for _, p, _ in steps if p not in NEVER_DISABLED))
        order = order[:MAX_PASSES]
        todo = list(enumerate(order))
        aborted = []
        for _ in range(restarts + 1):
            (work / "todo.json").write_text(json.dumps(todo))
            try:
                isolated(snippet, call="recompile with one HLO pass disabled",
                         timeout=timeout)
                break
            except AssertionError:   # killed (XLA aborts on a pass it needs): skip it
                left = [(k, n) for k, n in todo if not (work / f"{k}.npz").exists()
                        and not (work / f"{k}.err").exists()]
                if not left:
                    break
                aborted.append(left[0][1])
                todo = left[1:]
        fixers = [n for k, n in enumerate(order) if (work / f"{k}.npz").exists()
                  and passes(_loaded(work / f"{k}.npz"))]
        died = f"; disabling {', '.join(aborted)} killed the process" if aborted else ""
        if not fixers:
            return PassFinding(None, f"no single pass's disabling makes it pass "
                                     f"({len(order)} tried{died})", tuple(order))
        chosen = next((f for f in fixers if f not in pipelines), fixers[0])
        others = [f for f in fixers if f != chosen]
        also = f"; disabling {', '.join(others)} also does" if others else ""
        return PassFinding(chosen, f"the program passes with xla_disable_hlo_passes="
                                   f"{chosen}, {len(order)} passes tried{also}{died}",
                           tuple(order), tuple(fixers),
                           _module_before(work / "dumps", steps, chosen))


def attach(err: BaseException, finding: PassFinding) -> None:
    """Note ``finding`` on the failure ``err`` (its note and its data)."""
    err.add_note(finding.note())
    setattr(err, ATTRIBUTE, finding)


def of(err: BaseException) -> dict[str, Any] | None:
    """The ``failures[].compiler_pass`` data attached to ``err``, or None."""
    finding = getattr(err, ATTRIBUTE, None)
    return finding.data() if isinstance(finding, PassFinding) else None
