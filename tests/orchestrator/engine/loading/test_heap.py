"""The collector is tuned while judging and restored after (orchestrator/engine/loading/heap.py)."""

from __future__ import annotations

import gc

import pytest

from counterfact.orchestrator.engine.loading.heap import JUDGING_THRESHOLDS, judging_heap


def test_thresholds_and_freeze_are_restored_even_on_error() -> None:
    before = gc.get_threshold()
    seen = []

    def judge() -> None:
        with judging_heap():
            seen.append((gc.get_threshold(), gc.get_freeze_count()))
            raise RuntimeError

    with pytest.raises(RuntimeError):
        judge()
    assert seen[0][0] == JUDGING_THRESHOLDS and seen[0][1] > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_cycles_made_while_judging_are_still_collected() -> None:
    class Node:
        other: object

    with judging_heap():
        for _ in range(1000):
            a, b = Node(), Node()
            a.other, b.other = b, a
        assert gc.collect() >= 2 * 999  # every pair but the last, still named by a and b


def test_a_callers_own_freeze_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # the calls, not the count: another thread (a test's server, a live-state ticker) may free
    # frozen objects meanwhile, so get_freeze_count() can fall by a few without any unfreeze
    calls: list[str] = []
    real_freeze, real_unfreeze = gc.freeze, gc.unfreeze
    gc.freeze()
    try:
        monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze") or real_freeze())
        monkeypatch.setattr(gc, "unfreeze", lambda: calls.append("unfreeze") or real_unfreeze())
        with judging_heap():
            pass
        assert calls == []
        assert gc.get_freeze_count() > 0
    finally:
        monkeypatch.undo()
        gc.unfreeze()
