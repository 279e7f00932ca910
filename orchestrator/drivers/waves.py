"""The wave scheduler of a sequential sweep (rule 19): decides as records stream in.

Per challenger it keeps a *window* (the seed count of its next look) and how far it is
*scheduled*. When every seed of the window has a record, for the arm and for its baseline, the
arm is looked at (:func:`counterfact.verdicts.stats.sequential.look`) on exactly seeds
``0..window-1``, so decisions depend on the seeds' outcomes, never on the order runs finished in,
and a resumed sweep replays them identically. An undecided arm's window moves to the next wave;
a decided arm's queued runs are withdrawn from the feed, and the baseline's queued seeds that no
arm needs any more with it.

When an executor has idle workers and the feed runs short, :meth:`WaveScheduler.refill` queues
the next wave of undecided arms ahead of their look (at most one wave ahead); such run-ahead
records wait, parked in the tally, until the window reaches them, and are never looked at
earlier. Seeds stay ``0..k-1`` per arm, paired across arms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from counterfact.orchestrator.engine.sourcing.plan import seed_blocks
from counterfact.orchestrator.engine.sourcing.source import Planned, RunSource
from counterfact.probes.arms import ArmSpec
from counterfact.probes.pairs import pairs_of
from counterfact.probes.runner import RunContext
from counterfact.probes.scenarios import ScenarioSpec
from counterfact.probes.tally import ScenarioTally
from counterfact.verdicts.stats.sequential import Look, look
from counterfact.verdicts.stats.settings import Waves


@dataclass
class _Arm:
    scenario: ScenarioSpec
    spec: ArmSpec
    window: int
    scheduled: int = 0
    look: Look | None = None
    """The latest look; the deciding one once the arm stopped."""

    @property
    def decided(self) -> bool:
        return self.look is not None and self.look.stopped_for is not None


class WaveScheduler:
    """Schedules the seeds of every (scenario, challenger) wave by wave, as records arrive."""

    def __init__(
        self,
        scenarios: Sequence[ScenarioSpec],
        arms: Sequence[ArmSpec],
        baseline: ArmSpec,
        tallies: dict[str, ScenarioTally],
        source: RunSource,
        waves: Waves,
    ) -> None:
        self.waves = waves
        self.tallies = tallies
        self.source = source
        self.baseline = baseline
        self.feed = source.feed(refill=self.refill)
        self.states = {
            sc.id: [_Arm(sc, a, waves.samples) for a in arms if a.id != baseline.id]
            for sc in scenarios
        }
        self._base_requested = {sc.id: np.zeros(waves.max_samples, dtype=bool) for sc in scenarios}
        self._views = {a.id: a.view() for a in arms}

    def start(self) -> None:
        """Queue the first wave (in the plan's order: blocks of seeds, arms interleaved per
        block, :mod:`~counterfact.orchestrator.engine.sourcing.plan`) and replay what the run
        directory already holds.
        """
        for sc_id, states in self.states.items():
            sc = self.tallies[sc_id].scenario
            planned: list[Planned] = []
            for seeds in seed_blocks(self.waves.samples):
                planned.extend(self._planned(sc, self.baseline, seed) for seed in seeds)
                for state in states:
                    planned.extend(self._planned(sc, state.spec, seed) for seed in seeds)
            self._base_requested[sc_id][: self.waves.samples] = True
            for state in states:
                state.scheduled = self.waves.samples
            self._queue(planned)
        for sc_id in self.states:
            self.advance(sc_id)

    def _planned(self, sc: ScenarioSpec, arm: ArmSpec, seed: int) -> Planned:
        return RunContext(scenario=sc.view(), arm=self._views[arm.id], seed=seed), arm

    def _queue(self, planned: list[Planned]) -> None:
        """Queue what is not recorded or cached (cached records reach the tallies at once)."""
        _, todo = self.source.split(planned)
        self.source.enqueue(self.feed, todo)

    def _schedule(self, state: _Arm, upto: int) -> None:
        """Queue the arm's seeds and its baseline's up to ``upto`` (baseline first per seed)."""
        sc = state.scenario
        requested = self._base_requested[sc.id]
        base = [self._planned(sc, self.baseline, s) for s in range(upto) if not requested[s]]
        requested[:upto] = True
        arm = [self._planned(sc, state.spec, s) for s in range(state.scheduled, upto)]
        state.scheduled = max(state.scheduled, upto)
        self._queue(base + arm)

    def advance(self, scenario: str) -> None:
        """Look at every arm of ``scenario`` whose window is complete, until nothing changes."""
        states = self.states.get(scenario, [])
        tally = self.tallies[scenario]
        base = tally.arms[self.baseline.id]
        changed = True
        while changed:
            changed = False
            for state in states:
                arm = tally.arms[state.spec.id]
                ready = arm.complete(state.window) and base.complete(state.window)
                if state.decided or not ready:
                    continue
                changed = True
                tally.flush()
                state.look = found = self._look(tally, state)
                if found.stopped_for is not None:
                    self._withdraw(state)
                else:
                    self._widen(tally, state)

    def _look(self, tally: ScenarioTally, state: _Arm) -> Look:
        w = self.waves
        if tally.reference.text is None or tally.scoring_failed:
            return Look(state.window, 0, 0, 1.0, w.threshold, "untestable")
        seed0 = tally.reference.source == "baseline-arm"
        pairs = pairs_of(
            tally.arms[state.spec.id], tally.arms[self.baseline.id], exclude_seed0=seed0
        )
        return look(pairs.n10, pairs.n01, seeds=state.window, pairs=pairs.size, rule=w)

    def _widen(self, tally: ScenarioTally, state: _Arm) -> None:
        state.window = self.waves.after(state.window)
        tally.widen(state.spec.id, state.window)
        tally.widen(self.baseline.id, state.window)
        if state.scheduled < state.window:
            self._schedule(state, state.window)

    def _withdraw(self, state: _Arm) -> None:
        """Cancel the decided arm's queued runs, and the baseline's no arm needs any more."""
        sc, arm, base = state.scenario.id, state.spec.id, self.baseline.id
        self.feed.cancel(lambda c: c.scenario.id == sc and c.arm.id == arm)
        need = max((s.window if s.decided else s.scheduled for s in self.states[sc]), default=0)
        requested = self._base_requested[sc]

        def unneeded(c: RunContext) -> bool:
            drop = c.scenario.id == sc and c.arm.id == base and c.seed >= need
            if drop:
                requested[c.seed] = False
            return drop

        self.feed.cancel(unneeded)

    def refill(self, n: int) -> None:
        """Idle workers: queue the next wave of undecided arms ahead of their look (at most one
        wave ahead each, the least advanced first) until about ``n`` runs are queued.
        """
        ahead = [
            s
            for states in self.states.values()
            for s in states
            if not s.decided and s.scheduled <= s.window < self.waves.max_samples
        ]
        for state in sorted(ahead, key=lambda s: s.scheduled):
            if len(self.feed) >= n:
                return
            if state.decided or state.scheduled > state.window:  # changed by an earlier refill
                continue
            self._schedule(state, self.waves.after(state.window))
            self.advance(state.scenario.id)

    def looks(self) -> dict[tuple[str, str], Look]:
        """Each challenger's latest look, by (scenario, arm)."""
        return {
            (sc, s.spec.id): s.look for sc, states in self.states.items() for s in states if s.look
        }

    def undecided(self) -> list[tuple[str, str]]:
        """Challengers still sampling."""
        return [(sc, s.spec.id) for sc, ss in self.states.items() for s in ss if not s.decided]
