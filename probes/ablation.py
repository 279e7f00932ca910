"""The runner-side seam of ablations and restorations: filter your own lists by the arm.

counterfact cannot reach into your program; the runner applies the arm. This helper keeps that
short and strict::

    def run(ctx):
        tools = apply_ablations(ALL_TOOLS, ctx.arm, key=lambda t: f"tool:{t.name}",
                                restorable=OPTIONAL_TOOLS)
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

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
            an ablation silently remove nothing, and its verdict would be about nothing).

    Raises:
        ValueError: with ``strict``, an ablation or restoration id matches no item.
    """
    present = list(items)
    optional = list(restorable)
    removed = set(arm.ablations)
    restored = set(arm.restorations)
    if strict:
        _check_known("ablation", removed, {key(i) for i in present})
        _check_known("restoration", restored, {key(i) for i in optional})
    kept = [i for i in present if key(i) not in removed]
    kept.extend(i for i in optional if key(i) in restored and key(i) not in removed)
    return kept


def _check_known(what: str, wanted: set[str], known: set[str]) -> None:
    unknown: Sequence[str] = sorted(wanted - known)
    if unknown:
        msg = (
            f"{what} id(s) {unknown} match no item; known ids: {sorted(known)[:20]} "
            "(pass key= to map items to ids, or strict=False to ignore)"
        )
        raise ValueError(msg)
