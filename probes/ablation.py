"""The runner-side seam of ablations and restorations: filter your own lists by the arm.

counterfact cannot reach into your program; the runner applies the arm. This helper keeps that
short and strict, one call per kind of thing (each checks only the ids of its own namespace)::

    def run(ctx):
        tools = apply_ablations(ALL_TOOLS, ctx.arm, key=lambda t: f"tool:{t.name}",
                                restorable=OPTIONAL_TOOLS)
        facts = apply_ablations(FACTS, ctx.arm, key=lambda f: f"fact:{f.id}")
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from difflib import get_close_matches
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # annotations only: checking a sweep file loads this, not the runner's API
    from counterfact.probes.runner import ArmView

T = TypeVar("T")


def _identity(item: object) -> str:
    return str(item)


def apply_ablations(
    items: Iterable[T],
    arm: ArmView,
    *,
    key: Callable[[T], str] = _identity,
    restorable: Iterable[T] = (),
    strict: bool = True,
) -> list[T]:
    """The items the arm keeps: ``items`` minus its ablations, plus restored ``restorable`` ones.

    Args:
        items: the things present as the configuration stands (tools, facts, memory entries).
        arm: ``ctx.arm``.
        key: the id of an item, as arms name it in ``ablations`` / ``restorations``
            (default ``str(item)``).
        restorable: things normally absent that a restoration may add back.
        strict: raise when the arm names an id that matches nothing (a typo would otherwise make
            an ablation silently remove nothing, and its verdict would be about nothing). The
            check is scoped to this call's namespaces — the text before the first ``:`` of
            its items' ids — so one call for ``tool:`` ids and another for ``fact:`` ids compose:
            each checks its own and leaves the other's alone.

    Raises:
        ValueError: with ``strict``, an ablation or restoration id in this call's namespace
            matches no item (the message suggests the closest known id).
    """
    present = list(items)
    optional = list(restorable)
    removed = set(arm.ablations)
    restored = set(arm.restorations)
    claims = _CLAIMS.get()
    if strict:
        keys = {key(i) for i in present} | {key(i) for i in optional}
        spaces = {namespace(k) for k in keys}
        if claims is not None:
            claims.update(spaces)
        _check_known("ablation", _ours(removed, spaces), {key(i) for i in present})
        _check_known("restoration", _ours(restored, spaces), {key(i) for i in optional})
    elif claims is not None:
        claims.add(ANY)  # not strict: the runner takes responsibility for every id
    kept = [i for i in present if key(i) not in removed]
    kept.extend(i for i in optional if key(i) in restored and key(i) not in removed)
    return kept


ANY = "*"
"""A claim on every namespace (a non-strict call)."""
_CLAIMS: ContextVar[set[str] | None] = ContextVar("counterfact_ablation_claims", default=None)


@contextmanager
def claiming() -> Iterator[set[str]]:
    """Collect, during one run, the namespaces its ``apply_ablations`` calls checked."""
    claimed: set[str] = set()
    token = _CLAIMS.set(claimed)
    try:
        yield claimed
    finally:
        # ValueError: closed from another context, a run given up with its event loop (its
        # coroutine is closed when collected); the context the claim belonged to went with it
        with suppress(ValueError):
            _CLAIMS.reset(token)


def unclaimed(arm: ArmView, claimed: set[str]) -> str | None:
    """Why some of the arm's ids were checked by no ``apply_ablations`` call of the run (a typo
    in the namespace: ``tols:search``), or None. A run that never called it applies the arm its
    own way, so nothing is said then.
    """
    if not claimed or ANY in claimed:
        return None
    left = sorted(i for i in (*arm.ablations, *arm.restorations) if namespace(i) not in claimed)
    if not left:
        return None
    first = left[0]
    close = get_close_matches(namespace(first), sorted(claimed), n=1)
    hint = ""
    if close:
        rest = first.split(":", 1)[1] if ":" in first else first
        hint = f"; did you mean {close[0] + ':' + rest if close[0] else rest!r}?"
    spaces = ", ".join(repr(s) if s else "no prefix" for s in sorted(claimed))
    return (
        f"id(s) {left} belong to no apply_ablations call of this run (namespaces checked: "
        f"{spaces}){hint} An unchecked id removes nothing, so the arm would test nothing."
    )


PASSAGE = "context:"
"""The namespace of a scenario's passages (``context:<id>``, the chat runner's)."""


def covers(removed: str, part: str) -> bool:
    """Removing ``removed`` removes ``part``: it names it, or the message it is in (``m1``
    covers ``m1.p0``); a passage's id names only itself (``context:sec3`` does not cover
    ``context:sec3.1``).
    """
    if part == removed:
        return True
    return not removed.startswith(PASSAGE) and part.startswith(removed + ".")


def namespace(item_id: str) -> str:
    """The text before the first ``:`` (``tool`` for ``tool:search``); empty without one."""
    return item_id.split(":", 1)[0] if ":" in item_id else ""


def _ours(wanted: set[str], spaces: set[str]) -> set[str]:
    """The ids in this call's namespaces; the others belong to other calls (tools, facts, ...)."""
    return {w for w in wanted if namespace(w) in spaces}


def _check_known(what: str, wanted: set[str], known: set[str]) -> None:
    unknown: Sequence[str] = sorted(wanted - known)
    if unknown:
        first = unknown[0]
        close = get_close_matches(first, sorted(known), n=1)
        hint = f"did you mean {close[0]!r} for {first!r}? " if close else ""
        if not namespace(first):
            hint += "(give ids a prefix per kind — tool:x, fact:y — so each call checks its own) "
        msg = (
            f"{what} id(s) {list(unknown)} match no item in this call's namespace "
            f"({namespace(first) or 'no prefix'!r}); {hint}known ids: {sorted(known)[:20]} "
            "(pass key= to map items to ids, or strict=False to ignore)"
        )
        raise ValueError(msg)
