from __future__ import annotations

from dataclasses import dataclass

import pytest

from counterfact import apply_ablations
from counterfact.probes.arms import ArmSpec, intervention
from counterfact.probes.runner import ArmView


@dataclass(frozen=True)
class Tool:
    name: str


def test_removes_ablated_and_adds_restored() -> None:
    arm = ArmView("a", {}, ablations=("search",), restorations=("calc",))
    kept = apply_ablations(["search", "read"], arm, restorable=["calc", "draw"])
    assert kept == ["read", "calc"]


def test_key_maps_items_to_ids() -> None:
    arm = ArmView("a", {}, ablations=("tool:search",))
    tools = [Tool("search"), Tool("read")]
    assert apply_ablations(tools, arm, key=lambda t: f"tool:{t.name}") == [Tool("read")]


def test_unknown_id_is_an_error_unless_not_strict() -> None:
    arm = ArmView("a", {}, ablations=("serch",))
    with pytest.raises(ValueError, match=r"ablation id\(s\) \['serch'\] match no item"):
        apply_ablations(["search"], arm)
    assert apply_ablations(["search"], arm, strict=False) == ["search"]


def test_intervention_kinds_against_the_baseline() -> None:
    base = ArmSpec("base", {"model": "m"}, ablations=("old",))
    assert intervention(base, base).kind == "baseline"
    removal = intervention(ArmSpec("r", {"model": "m"}, ("old", "tool:x")), base)
    assert (removal.kind, removal.phrase, removal.removed) == (
        "ablation",
        "removing 'tool:x'",
        ("tool:x",),
    )
    both = intervention(ArmSpec("m", {"model": "m"}, ("old", "a"), ("b",)), base)
    assert (both.kind, both.phrase) == ("mixed", "removing 'a' and restoring 'b'")
    restore = intervention(ArmSpec("s", {"model": "m"}, ("old",), ("f1", "f2")), base)
    assert (restore.kind, restore.phrase) == ("restoration", "restoring 'f1' and 'f2'")
    switch = intervention(ArmSpec("big", {"model": "big"}, ("old",)), base)
    assert (switch.kind, switch.phrase) == ("substitution", "switching to arm 'big'")
    # Undoing one of the baseline's ablations is not a plain ablation either.
    undo = intervention(ArmSpec("u", {"model": "m"}, ()), base)
    assert undo.kind == "substitution"


def test_a_claim_closed_from_another_context_ends_quietly() -> None:
    # A run given up with its event loop is a coroutine closed when it is collected, in whatever
    # context the collector runs: resetting its claim there raised ValueError ("created in a
    # different Context"), printed as "Exception ignored in" with a traceback on a sweep's stderr.
    import contextvars

    from counterfact.probes.ablation import _CLAIMS, claiming

    held = claiming()
    claimed = contextvars.copy_context().run(held.__enter__)
    claimed.add("tools")
    assert held.__exit__(None, None, None) is False  # here, not in the context it was entered in
    assert _CLAIMS.get() is None  # and this context's claims are untouched
