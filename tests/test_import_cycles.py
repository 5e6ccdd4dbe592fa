"""``runtime`` and ``conformance`` have no import cycles, and ``runtime`` does not import
the suite (issue 15: "runtime stands alone").

The graph is grimp's (the engine of import-linter): every ``import`` statement,
including those inside functions, between modules of the two packages.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGES = ("runtime", "conformance")

def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one module (or a
    module importing itself), each sorted, in sorted order (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(
                        graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or graph.direct_import_exists(importer=node,
                                                                    imported=node):
                    cycles.append(sorted(component))
    return sorted(cycles)


def _describe(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    members = set(cycle)
    edges = []
    for importer in cycle:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            lines = [d["line_number"] for d in graph.get_import_details(importer=importer,
                                                                         imported=imported)]
            edges.append(f"  {importer} -> {imported} (line {', '.join(map(str, lines))})")
    return "\n".join(edges)


@pytest.fixture
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, include_external_packages=False, cache_dir=None)


def test_runtime_and_conformance_have_no_import_cycles(graph):
    cycles = import_cycles(graph)
    assert cycles == [], "import cycles:\n" + "\n\n".join(_describe(graph, c) for c in cycles)


def test_cycle_finder_finds_cycles():
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"),
                               ("p.d", "p.e"), ("p.e", "p.d"), ("p.f", "p.f"), ("p.g", "p.a")]:
        graph.add_import(importer=importer, imported=imported)
    assert import_cycles(graph) == [["p.a", "p.b", "p.c"], ["p.d", "p.e"], ["p.f"]]
    graph.remove_import(importer="p.c", imported="p.a")
    graph.remove_import(importer="p.e", imported="p.d")
    graph.remove_import(importer="p.f", imported="p.f")
    assert import_cycles(graph) == []


def test_runtime_imports_nothing_from_the_suite(graph):
    assert not graph.chain_exists(importer="runtime", imported="conformance", as_packages=True), (
        graph.find_shortest_chains(importer="runtime", imported="conformance"))
