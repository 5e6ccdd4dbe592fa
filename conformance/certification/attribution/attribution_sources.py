"""Whose failure is it: the attribution of every result that is not a pass.

Attributions (docs/vendor-guide.md, "The verdict, attribution and the run's guarantees in full"):

- ``plugin``: the PJRT implementation under test, including its compiler, kernels and
  runtime. For jaxlib's built-in CPU client, the client itself (XLA's CPU PJRT client
  compiled into jaxlib) is the plugin;
- ``framework``: jaxlib/jax above the PJRT C API (the Python/nanobind layer, PjRt-IFRT,
  the distributed runtime, jax's lowering), the same with every plugin;
- ``suite``: this project (a wrong check, a missing registration the suite should make);
- ``unattributed``: no evidence decides.

Evidence is data. :data:`KINDS` is the one list of evidence sources, strongest first:
attribution (:func:`decide`), ``verify``'s re-check
(:mod:`conformance.certification.attribution.attribution_check`), ``rerender``
(:mod:`conformance.certification.bundle.rerender`) and the renderers
(:func:`conformance.certification.rendering.failure_view.evidence_lines`) all read it.
Each evidence item in ``report.json`` is an object ``{"source": <kind name>, "answer":
<attribution>, <the kind's facts>}`` (``docs/report-schema.md``); prose is written
only by the renderers.

A :class:`Source` is a kind's function ``fn(record) -> facts | None`` (``record``: the
result's ``report.json["failures"]``-style entry: the ``results`` entry plus
``message``, ``reproduction``, ``known_failure`` and the failure facts; ``facts``: a
dict with ``answer`` and some of the kind's :attr:`Kind.facts`). Sources are consulted
in the order of :data:`KINDS`; the first answer naming ``plugin``, ``framework`` or
``suite`` decides, every answer is an evidence item. An answer ``unattributed`` is
evidence without a decision. Attribution annotates; it never changes a status.

Items of a schema-2 bundle are strings ``"<source>: <text>"``; :func:`items` reads
them as *legacy* items (``{"source", "answer", "legacy": <text>}``) without reading the
text, except the schema-2 tag :data:`SHARED_WITH_XLA` at the start of a ``reference``
line (``"shared_with_xla": true``), which its XLA-shared count was computed from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from conformance.certification.catalog import known_failures

ATTRIBUTIONS = ("plugin", "framework", "suite", "unattributed")
#: Attributions that take a result out of the plugin verdict (stack findings).
STACK = ("framework", "suite")
UNATTRIBUTED = "unattributed"
#: The name of a plugin failure in XLA code the reference CPU client shares (and the
#: tag that marked it in a schema-2 ``reference`` evidence line).
SHARED_WITH_XLA = "shared with XLA"
#: Layers of a catalog defect that back a ``framework`` attribution: the defect is
#: above the PJRT C API (jaxlib's Python/nanobind layer, IFRT, the distributed runtime)
#: or in the program jax lowered.
FRAMEWORK_LAYERS = ("framework", "lowering")
#: Statuses that are no failure and block nothing: they get no attribution (a skip or a
#: gracefully unsupported feature is nobody's defect).
NOT_FAILURES = ("pass", "skipped", "not_supported")
#: The C API re-run's outcomes that decide, and their answer: the plugin gets it right
#: on its own (the layer above the C API made the failure), or wrong there too.
CAPI_ANSWERS = {"correct": "framework", "wrong": "plugin"}
#: Keys of a legacy item (a schema-2 evidence string, :func:`legacy_item`).
LEGACY_KEYS = ("legacy", "shared_with_xla")


@dataclasses.dataclass(frozen=True)
class Kind:
    """One evidence source: its ``name`` (an item's ``source``), the ``facts`` its items
    may carry besides ``source`` and ``answer``, and whether it is ``recorded``: a re-run
    of the run itself, whose facts a bundle keeps (``rerender`` reads them again), as
    opposed to one recomputed from the defect catalog and the failure message."""

    name: str
    facts: tuple[str, ...]
    recorded: bool
    what: str


#: The evidence sources, strongest first (docs/report-schema.md lists their facts).
KINDS: tuple[Kind, ...] = (
    Kind("lowering", ("defect",), False,
         "a catalog defect of the program jax lowered (layer lowering): a re-run of the same "
         "program below the framework reproduces it, so no re-run can clear it"),
    Kind("registration", ("quote",), False,
         "the framework's own account in the failure message: a target jax's lowering calls "
         "could not be given to the plugin client"),
    Kind("oracle", ("quote",), False,
         "the suite's own account in the failure message: its two oracles disagree while "
         "every device matches one of them"),
    Kind("capi", ("check", "outcome", "detail"), True,
         "the failure re-run below the framework through the plugin's PJRT C API"),
    Kind("reference", ("status", "reference_status", "reference_defect", "not_rerun"), True,
         "the failure re-run on the reference backend, jaxlib's built-in CPU client"),
    Kind("catalog", ("defect", "upstream", "note", "expected", "known_failure"), False,
         "the defect catalog entry that matches the test"),
)
SOURCES: dict[str, Kind] = {k.name: k for k in KINDS}
NAMES = tuple(SOURCES)

Facts = dict[str, Any]
EvidenceSource = Callable[[dict[str, Any]], "Facts | None"]


@dataclasses.dataclass(frozen=True)
class Source:
    """A function of the evidence source ``name`` (one of :data:`NAMES`): ``fn(record)``
    returns None (nothing to say) or its facts with their ``answer``."""

    name: str
    fn: EvidenceSource

    def __post_init__(self) -> None:
        if self.name not in SOURCES:
            raise ValueError(f"unknown evidence source {self.name!r}; the sources are "
                             f"{', '.join(NAMES)}")

    @property
    def rank(self) -> int:
        """Its place in :data:`KINDS`: lower is stronger."""
        return NAMES.index(self.name)


def item(name: str, answer: str, **facts: Any) -> dict[str, Any]:
    """The evidence item of source ``name`` answering ``answer``, with ``facts`` (those
    that are None left out). ValueError for an unknown source, answer or fact."""
    kind = SOURCES.get(name)
    if kind is None:
        raise ValueError(f"unknown evidence source {name!r}; the sources are {', '.join(NAMES)}")
    if answer not in ATTRIBUTIONS:
        raise ValueError(f"evidence source {name!r} must answer one of {ATTRIBUTIONS}, "
                         f"got {answer!r}")
    unknown = sorted(set(facts) - set(kind.facts) - set(LEGACY_KEYS))
    if unknown:
        raise ValueError(f"evidence source {name!r} has no fact {', '.join(unknown)}; its "
                         f"facts are {', '.join(kind.facts)}")
    return {"source": name, "answer": answer,
            **{k: v for k, v in facts.items() if v is not None}}


def _check_answer(source: Source, answer: Any) -> dict[str, Any]:
    if not isinstance(answer, dict) or "answer" not in answer:
        raise ValueError(f"evidence source {source.name!r} must return None or a dict of "
                         f"facts with an 'answer' (one of {ATTRIBUTIONS}), got {answer!r}")
    facts = {k: v for k, v in answer.items() if k not in ("source", "answer")}
    try:
        return item(source.name, answer["answer"], **facts)
    except ValueError as err:
        raise ValueError(f"evidence source {source.name!r} returned {answer!r}: {err}") \
            from None


def decided(evidence: list[dict[str, Any]]) -> str:
    """The attribution that evidence ``items`` (strongest first) decide: the first answer
    other than ``unattributed``."""
    return next((e["answer"] for e in evidence if e.get("answer") not in (None, UNATTRIBUTED)),
                UNATTRIBUTED)


def decide(record: dict[str, Any], sources: list[Source]) -> tuple[str, list[dict[str, Any]]]:
    """(attribution, evidence items) of one result ``record`` from ``sources``, consulted
    in the order of :data:`KINDS`. ValueError when a source answers something other than
    None or its facts (:func:`item`)."""
    evidence = []
    for source in sorted(sources, key=lambda s: s.rank):
        answer = source.fn(record)
        if answer is not None:
            evidence.append(_check_answer(source, answer))
    return decided(evidence), evidence


def legacy_item(line: str, answer: str) -> dict[str, Any]:
    """A schema-2 evidence string ``"<source>: <text>"`` as a legacy item answering
    ``answer`` (the attribution the bundle recorded for its result: the string says
    nothing this suite reads back). Only the tag :data:`SHARED_WITH_XLA` that starts a
    schema-2 ``reference`` line is kept, as ``"shared_with_xla": true``."""
    source, _, text = line.partition(": ")
    found = {"source": source, "answer": answer, "legacy": text}
    if source == "reference" and text.startswith(SHARED_WITH_XLA):
        found["shared_with_xla"] = True
    return found


def items(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The evidence items of ``result`` (a ``report.json["results"]`` or ``failures``
    entry): schema 3's objects as they are, schema 2's strings as :func:`legacy_item`."""
    answer = result.get("attribution") or UNATTRIBUTED
    return [e if isinstance(e, dict) else legacy_item(str(e), answer)
            for e in result.get("evidence") or []]


def is_legacy(evidence: dict[str, Any]) -> bool:
    """The item is a schema-2 string read by :func:`legacy_item` (no facts to check)."""
    return "legacy" in evidence


def shared(evidence: dict[str, Any]) -> bool:
    """The item says the result is a plugin failure shared with XLA: the reference CPU
    client fails the same with a cataloged XLA defect (a legacy item: tagged so)."""
    if evidence.get("source") != "reference" or evidence.get("answer") != "plugin":
        return False
    return bool(evidence.get("shared_with_xla") if is_legacy(evidence)
                else evidence.get("reference_defect"))


def _defect_applies(entry: known_failures.Entry | None, status: str) -> bool:
    return entry is not None and entry.defect is not None and status in entry.defect.expected


def message_source(name: str, marker: str, attribution: str,
                   statuses: tuple[str, ...] = ()) -> Source:
    """An account given in the failure's own message as an evidence source: a result
    whose message has a line naming ``marker`` (and whose status is one of ``statuses``,
    when given) is ``attribution``'s; the item's ``quote`` is that line from the marker
    on (at most 300 characters), which ``verify`` finds in the message again."""
    def source(record: dict[str, Any]) -> Facts | None:
        if statuses and record["status"] not in statuses:
            return None
        line = next((ln for ln in (record.get("message") or "").splitlines()
                     if marker in ln), None)
        if line is None:
            return None
        return {"answer": attribution, "quote": line[line.index(marker):][:300]}
    return Source(name, source)


#: Statuses an ``oracle`` account decides: the oracles' disagreement is raised as an error.
ORACLE_STATUSES = ("fail_error",)


def registration_source(marker: str) -> Source:
    """The framework's own account as an evidence source: a failure whose message names
    ``marker`` (``runtime.plugin_support.FRAMEWORK_MARKER``: a target that jax's lowering
    calls, such as a LAPACK FFI handler, could not be given to the plugin client) is the
    framework's, whatever the plugin does with the program otherwise."""
    return message_source("registration", marker, "framework")


def oracle_source(marker: str) -> Source:
    """The suite's own account: a ``fail_error`` whose message names ``marker``
    (``conformance.programs.interpreter.SUITE_MARKER``: the two oracles disagree while
    every device matches one of them) is the suite's defect."""
    return message_source("oracle", marker, "suite", statuses=ORACLE_STATUSES)


def catalog_source(entries: dict[str, known_failures.Entry]) -> Source:
    """The defect catalog as an evidence source: ``entries`` maps node ids to their
    matching known-failure entry. A defect decides only when the result's status is one
    of its ``expected`` statuses (the item: ``defect``, ``upstream`` and ``note``, the
    catalog's evidence or summary); another status gives ``defect`` and ``expected``
    and decides nothing, as does an old-format entry without a defect
    (``known_failure``: its label)."""
    def source(record: dict[str, Any]) -> Facts | None:
        entry = entries.get(record["nodeid"])
        if entry is None:
            return None
        d = entry.defect
        if d is None:
            return {"answer": UNATTRIBUTED, "known_failure": entry.label}
        if record["status"] not in d.expected:
            return {"answer": UNATTRIBUTED, "defect": d.id, "expected": list(d.expected)}
        return {"answer": d.attribution, "defect": d.id, "upstream": d.upstream,
                "note": d.evidence or d.summary}
    return Source("catalog", source)


def lowering_source(entries: dict[str, known_failures.Entry]) -> Source:
    """Catalog defects of ``layer = "lowering"`` (the defect is in the program jax
    lowered, such as a reducer that is not commutative) as the strongest source: the C
    API re-run and the reference differential execute that same program, so their answer
    (the plugin's result is wrong, the CPU client's is right) cannot clear the lowering.
    ``entries`` as in :func:`catalog_source`."""
    def source(record: dict[str, Any]) -> Facts | None:
        entry = entries.get(record["nodeid"])
        if not _defect_applies(entry, record["status"]) or entry.defect.layer != "lowering":
            return None
        return {"answer": entry.defect.attribution, "defect": entry.defect.id}
    return Source("lowering", source)


def offline_sources(entries: dict[str, known_failures.Entry]) -> list[Source]:
    """The sources recomputed from the catalog and the failure message, no backend
    needed (the kinds of :data:`KINDS` that are not ``recorded``): the catalog and its
    lowering defects (``entries`` as in :func:`catalog_source`), the framework's own
    account of a target it could not give a plugin client, and the suite's own account
    of two oracles that disagree. A run, ``finalize`` and ``rerender`` use this list."""
    from conformance.programs import interpreter
    from runtime import plugin_support

    return [lowering_source(entries), registration_source(plugin_support.FRAMEWORK_MARKER),
            oracle_source(interpreter.SUITE_MARKER), catalog_source(entries)]


def capi_facts(check: str, outcome: str, detail: str) -> Facts | None:
    """The ``capi`` evidence of a C API re-run (:func:`conformance.capi.run`): the
    ``check`` it ran, its ``outcome`` and the child's ``detail``; None for an outcome
    that decides nothing (``undecided``, or ``declined``: a partitioned program the
    re-run would have run on one device, which is not the failing configuration)."""
    if outcome not in CAPI_ANSWERS:
        return None
    return {"answer": CAPI_ANSWERS[outcome], "check": check, "outcome": outcome,
            "detail": detail}


def attribute(results: list[Any], sources: list[Source]) -> None:
    """Set ``attribution``, ``evidence`` (items) and ``defect`` of every failure (a status
    not in :data:`NOT_FAILURES`; ``results``:
    :class:`conformance.certification.results.records.Result`)."""
    for r in results:
        if r.status in NOT_FAILURES:
            continue
        record = r.failure()
        r.attribution, r.evidence = decide(record, sources)
        if _defect_applies(r.known_entry, r.status):
            r.defect = r.known_entry.defect.as_dict()


def stack_findings(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The stack findings of ``records`` (``report.json["results"]``): one finding per
    catalog defect (or per test without one) attributed to the framework or the suite,
    with its tests and statuses; counts of defects per attribution and of those linked
    upstream; and the number of results per attribution."""
    findings: dict[str, dict[str, Any]] = {}
    counts = {a: 0 for a in ATTRIBUTIONS}
    for r in records:
        if "attribution" not in r:
            continue
        counts[r["attribution"]] += 1
        if r["attribution"] not in STACK:
            continue
        key = (r.get("defect") or {}).get("id") or r["nodeid"]
        f = findings.setdefault(key, {"attribution": r["attribution"],
                                      "defect": r.get("defect"), "tests": [], "statuses": {}})
        f["tests"].append(r["nodeid"])
        f["statuses"][r["status"]] = f["statuses"].get(r["status"], 0) + 1
    items = [findings[k] for k in sorted(findings)]
    linked = sum(1 for f in items if f["defect"] and f["defect"]["upstream"].startswith("http"))
    return {"framework": sum(1 for f in items if f["attribution"] == "framework"),
            "suite": sum(1 for f in items if f["attribution"] == "suite"),
            "linked_upstream": linked, "results_by_attribution": counts, "findings": items}


def shared_with_xla(records: list[dict[str, Any]], xla_defects: set[str]) -> dict[str, Any]:
    """The plugin failures of ``records`` (``report.json["results"]``) that are in XLA
    code: a ``reference`` evidence item of the reference CPU client failing the same with
    a cataloged XLA defect (:func:`shared`) or a catalog defect whose id is in
    ``xla_defects`` (the XLA components of the catalog). ``{"count": n, "defects":
    sorted ids}``; these count in the plugin verdict like every plugin failure."""
    tests, defects = 0, set()
    for r in records:
        if r.get("attribution") != "plugin":
            continue
        d = (r.get("defect") or {}).get("id")
        if any(shared(e) for e in items(r)) or d in xla_defects:
            tests += 1
            if d:
                defects.add(d)
    return {"count": tests, "defects": sorted(defects)}
