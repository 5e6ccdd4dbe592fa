"""The order of commits: git topology, never wall time.

asv results name their commit by ``commit_hash``; :func:`of_commits` asks the git
repository the results belong to (``git cat-file --batch-check`` to know every commit,
then one ``git rev-list --topo-order --reverse --parents``) and gives an
:class:`Ordering`: parents before children, *previous* = the nearest ancestor among
given candidates (of several incomparable ones, the latest in topological order),
*next* = the nearest descendant.

When git is not available, the repository is not a git repository, or a commit is
unknown to it, the ordering falls back to asv's commit date (then commit hash) and
says so in :attr:`Ordering.fallback`: the pages print that reason; nothing falls back
silently.
"""

from __future__ import annotations

import dataclasses
import datetime
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

_TIMEOUT_S = 60


@dataclasses.dataclass
class Ordering:
    """Commits (full hashes) oldest first in ``sequence``; ``ancestors[c]``: the
    commits of ``sequence`` that are proper ancestors of ``c`` (under the date
    fallback: every commit before it); ``fallback``: None when git topology was used,
    else why not (one sentence)."""

    sequence: list[str]
    ancestors: dict[str, frozenset[str]]
    fallback: str | None = None

    def __post_init__(self) -> None:
        self._at = {c: i for i, c in enumerate(self.sequence)}

    def position(self, commit: str) -> int:
        """Index of ``commit`` in :attr:`sequence`. Raises KeyError when unknown."""
        return self._at[commit]

    def sort(self, commits: Iterable[str]) -> list[str]:
        """``commits`` oldest first. Raises KeyError on a commit not ordered."""
        return sorted(set(commits), key=self.position)

    def is_ancestor(self, a: str, b: str) -> bool:
        """True when ``a`` comes before ``b`` in history (a proper ancestor)."""
        return a in self.ancestors.get(b, frozenset())

    def previous(self, commit: str, candidates: Iterable[str]) -> str | None:
        """The nearest proper ancestor of ``commit`` among ``candidates``, or None."""
        older = [c for c in candidates if self.is_ancestor(c, commit)]
        return max(older, key=self.position) if older else None

    def next(self, commit: str, candidates: Iterable[str]) -> str | None:
        """The nearest proper descendant of ``commit`` among ``candidates``, or None."""
        newer = [c for c in candidates if self.is_ancestor(commit, c)]
        return min(newer, key=self.position) if newer else None

    @property
    def topological(self) -> bool:
        return self.fallback is None


def by_date(dates: Mapping[str, datetime.datetime], reason: str) -> Ordering:
    """The fallback: ``dates`` ({full hash: asv's commit date}) oldest first (ties by
    hash); each commit's ancestors are the commits before it."""
    seq = sorted(dates, key=lambda c: (dates[c], c))
    return Ordering(seq, {c: frozenset(seq[:i]) for i, c in enumerate(seq)}, reason)


def _git(repo: Path, args: list[str], stdin: str = "") -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], input=stdin, text=True,
                          capture_output=True, timeout=_TIMEOUT_S, check=False)
    if proc.returncode:
        raise RuntimeError(" ".join((proc.stderr or "git failed").split())[:200])
    return proc.stdout


def of_commits(dates: Mapping[str, datetime.datetime], repo: Path | None) -> Ordering:
    """The :class:`Ordering` of the commits of ``dates`` ({full hash: asv's commit
    date}) in the git repository ``repo`` (None: no repository given), falling back to
    :func:`by_date` with the reason when git cannot order them. Never raises."""
    if not dates:
        return Ordering([], {}, None)
    if repo is None:
        return by_date(dates, "no git repository given: commits ordered by asv's commit "
                              "date")
    try:
        known = _git(repo, ["cat-file", "--batch-check"], "".join(f"{c}^{{commit}}\n"
                                                                 for c in dates))
        missing = [ln.split()[0].removesuffix("^{commit}") for ln in known.splitlines()
                   if ln.endswith(" missing")]
        if missing:
            return by_date(dates, f"commit {missing[0][:8]}"
                           + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                           + f" is not in the git repository {repo}: commits ordered by "
                           "asv's commit date, not by git history")
        lines = _git(repo, ["rev-list", "--topo-order", "--reverse", "--parents",
                            *dates]).splitlines()
    except (OSError, RuntimeError, subprocess.SubprocessError) as err:
        return by_date(dates, f"git could not order the commits ({err}): commits ordered "
                              "by asv's commit date, not by git history")
    parents = {ln.split()[0]: ln.split()[1:] for ln in lines if ln.strip()}
    full = {c: next((h for h in parents if h.startswith(c)), c) for c in dates}
    ancestors: dict[str, frozenset[str]] = {}
    for short, commit in full.items():
        seen: set[str] = set()
        todo = list(parents.get(commit, []))
        while todo:
            c = todo.pop()
            if c not in seen:
                seen.add(c)
                todo.extend(parents.get(c, []))
        ancestors[short] = frozenset(s for s, f in full.items() if f in seen)
    pos = {h: i for i, h in enumerate(parents)}
    seq = sorted(dates, key=lambda c: pos.get(full[c], -1))
    return Ordering(seq, ancestors, None)
