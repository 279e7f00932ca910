"""``decide: test`` at too few samples (issue 27, item 11a): underpowered, said as such.

Reference values by exact enumeration: with ``n`` paired seeds the one-sided exact McNemar
p-value is smallest when every discordant pair goes the probe's way, ``P(Bin(n, 1/2) = n) =
2**-n``. So a probe at alpha 0.05 needs ``n >= 5`` (1/32 = 0.03125; 1/16 = 0.0625 fails) and a
confirmation at 0.05 / 4 = 0.0125 needs ``n >= 7`` (1/128 = 0.0078; 1/64 = 0.0156 fails).
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from counterfact.probes.stats import ProbeStats, summarize_probe
from counterfact.verdicts.bisect.power import samples_needed
from counterfact.verdicts.bisect.search import BisectOutcome, Decide, bisect
from counterfact.verdicts.bisect.wording import bisect_claim


class Clean:
    """The bug is 'a': ablating it fixes every seed; nothing else flips (noise-free)."""

    def __init__(self, samples: int) -> None:
        self.samples = samples
        self.calls = 0

    def __call__(self, keys: Sequence[tuple[str, ...]], first_seed: int = 0) -> list[ProbeStats]:
        self.calls += len(keys)
        seeds = list(range(first_seed, first_seed + self.samples))
        out = []
        for key in keys:
            flips = ["a" in key] * len(seeds)
            out.append(summarize_probe(seeds, flips, [1.0] * len(seeds), [None] * len(seeds)))
        return out


def _search(
    samples: int, exclude_seed0: bool = False, max_culprits: int = 4
) -> tuple[BisectOutcome, Clean]:
    probes = Clean(samples)
    decide = Decide(mode="test", alpha=0.05, exclude_seed0=exclude_seed0)
    found = bisect(
        ["a", "b", "c"], probes, samples=samples, max_culprits=max_culprits, decide=decide
    )
    return found, probes


def test_six_samples_cannot_confirm_at_alpha_over_max_culprits_and_say_so() -> None:
    # Before: the search found {a} and its confirmation (best p 1/64 > 0.0125) ended
    # "unconfirmed: no set held on fresh seeds", as if the program had been tested.
    outcome, probes = _search(6)
    assert (outcome.verdict, outcome.reason) == ("inconclusive", "underpowered")
    assert outcome.underpowered is not None and outcome.underpowered.samples_needed == 7
    assert probes.calls == 0 and outcome.probes_executed == 0
    claim = bisect_claim(outcome, scenario="s", comparator="exact", samples=6, max_probes=24)
    assert "underpowered" in claim and "7 samples per probe can reach alpha" in claim
    assert "no set could hold" in claim and "no probe could flip" not in claim
    assert "0.0156" in claim and "0.0125" in claim
    assert "no set held" not in claim and "Not reproducible" not in claim


def test_five_samples_with_seed0_as_reference_cannot_flip_a_probe() -> None:
    # Before: 4 pairs (seed 0 left out), best p 1/16 > 0.05: "not reproducible".
    outcome, _ = _search(5, exclude_seed0=True)
    assert (outcome.verdict, outcome.reason) == ("inconclusive", "underpowered")
    claim = bisect_claim(outcome, scenario="s", comparator="exact", samples=5, max_probes=24)
    assert "4 paired seeds (seed 0 left out" in claim and "no probe could flip" in claim
    assert "Not reproducible" not in claim


def test_seven_samples_confirm_the_culprit() -> None:
    outcome, _ = _search(7)
    assert (outcome.verdict, outcome.culprits) == ("confirmed", (("a",),))
    assert outcome.underpowered is None


def test_one_culprit_set_confirms_at_alpha_with_five_samples() -> None:
    outcome, _ = _search(5, max_culprits=1)
    assert (outcome.verdict, outcome.culprits) == ("confirmed", (("a",),))


@pytest.mark.parametrize(
    ("alpha", "max_culprits", "seed0", "needed"),
    [
        (0.05, 4, False, 7),  # confirmation: 4 / 2**7 = 0.031 <= 0.05 < 4 / 2**6
        (0.05, 1, True, 6),  # search: 5 pairs + seed 0; 1 / 2**5 <= 0.05 < 1 / 2**4
        (0.01, 4, False, 9),  # 4 / 2**9 = 0.0078 <= 0.01 < 4 / 2**8 = 0.0156
        (0.05, 2, False, 6),  # 2 / 2**6 = 0.031 <= 0.05 < 2 / 2**5 = 0.0625
    ],
)
def test_samples_needed_by_exact_enumeration(
    alpha: float, max_culprits: int, seed0: bool, needed: int
) -> None:
    assert samples_needed(alpha, max_culprits, seed0) == needed


def test_majority_mode_is_never_underpowered() -> None:
    outcome = bisect(["a", "b"], Clean(3), samples=3)
    assert outcome.underpowered is None and outcome.verdict == "confirmed"
