"""A sequential sweep's challengers: the test is the e-process each stopped on, and the record and
claim say why and where it stopped (rule 19).

The tier is untouched: it was computed, as always, on the seeds the arm used. The family's
adjustment (:func:`~counterfact.verdicts.family.adjust_family`) runs afterwards on
``p = min(1, 1/e)``, which is a valid p-value at any stopping time.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace

from counterfact.records.parts import SequentialRecord
from counterfact.records.summary import PooledEffectRecord, PooledRecord, StatisticsRecord
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.family import verdict_of
from counterfact.verdicts.stats.multiplicity import adjust, best_factor
from counterfact.verdicts.stats.pooled import pooled_effect_record
from counterfact.verdicts.stats.sequential import METHODS, Look, reachable
from counterfact.verdicts.stats.significance import TestResult

UNPAIRED_NOTE = " over runs paired by seed index"


def e_test(test: TestResult, look: Look) -> TestResult:
    """The arm's fixed-sample test replaced by the e-process at its stopping point."""
    method = METHODS[test.alternative] + (UNPAIRED_NOTE if test.pairing == "none" else "")
    return replace(
        test,
        method=method,
        n10=look.n10,
        n01=look.n01,
        p_value=min(1.0, 1 / look.e_value),
        e_value=look.e_value,
        min_attainable_p=min(1.0, 1 / reachable(0, 0, test.pairs, test.alternative)),
    )


def sequential_record(look: Look, max_samples: int) -> SequentialRecord:
    """Where and why the arm stopped, as recorded.

    Raises:
        ValueError: the arm has not stopped (``look.stopped_for`` is None).
    """
    if look.stopped_for is None:
        msg = f"the arm has not stopped at {look.seeds} seeds: there is nothing to record"
        raise ValueError(msg)
    return SequentialRecord(
        stopped_for=look.stopped_for,
        seeds_used=look.seeds,
        max_samples=max_samples,
        e_value=look.e_value,
        threshold=look.threshold,
        n10=look.n10,
        n01=look.n01,
        min_effect=look.min_effect,
        futility_e_value=look.futility_e_value,
        futile_because=look.futile_because,
    )


FIXED_SAMPLE = " (fixed-sample figure: not adjusted for sequential stopping)"
"""Said of the effect interval and the similarity test, which assume the seeds were fixed."""


def stop_sentence(record: SequentialRecord, *, withheld: bool = False) -> str:
    """Why the arm stopped, in plain words (without the evidence when its test is withheld)."""
    at = f"Sequential sampling stopped at {record.seeds_used} seeds (cap {record.max_samples})"
    if withheld:
        return f"{at}; its test is withheld, so the stopping evidence is not evidence about it."
    e, t = f"{record.e_value:.3g}", f"{record.threshold:.3g}"
    if record.stopped_for == "significant":
        return f"{at}: the e-value {e} reached the threshold {t}."
    if record.stopped_for == "futile" and record.futile_because == "below-min-effect":
        return (
            f"{at}: futile — an effect of {record.min_effect:g} or more is ruled out (e-value "
            f"{record.futility_e_value:.3g} against it, anytime-valid)."
        )
    if record.stopped_for == "futile":
        return (
            f"{at}: futile — even if every remaining seed up to {record.max_samples} went the "
            f"arm's way, the e-value (now {e}) could not reach the level any adjustment accepts."
        )
    if record.stopped_for == "untestable":
        return f"{at}: there is no reference to test against."
    return f"{at}: it reached the cap with the e-value at {e} (threshold {t})."


def pooled_e(rows: Sequence[VerdictRecord], settings: StatisticsRecord) -> list[PooledRecord]:
    """Rule 18 for a sequential sweep: per challenger, the product of its stopped e-values over
    its scenarios (independent runs, each stopped on its own data, so the product is an
    e-value — provided the runner's randomness differs between scenarios, not only by seed),
    ``p = min(1, 1/product)`` adjusted over the challengers.
    """
    rows_of: dict[str, list[VerdictRecord]] = defaultdict(list)
    for row in rows:
        if row.test is not None and row.test.e_value is not None:
            rows_of[row.arm].append(row)
    by_arm = {a: [r.test for r in mine if r.test is not None] for a, mine in rows_of.items()}
    if not by_arm or max(len(t) for t in by_arm.values()) < 2:
        return []
    arms = sorted(by_arm)
    logs = [sum(math.log(t.e_value) for t in by_arm[a] if t.e_value) for a in arms]
    p = [min(1.0, math.exp(-log)) for log in logs]  # no overflow however many scenarios
    products = [math.exp(min(log, 700.0)) for log in logs]
    p_adj = adjust(p, settings.adjust)
    factor = best_factor(settings.adjust, len(arms))
    return [
        PooledRecord(
            arm=a,
            scenarios=len(by_arm[a]),
            n10=sum(t.n10 for t in by_arm[a]),
            n01=sum(t.n01 for t in by_arm[a]),
            pairs=sum(t.pairs for t in by_arm[a]),
            p_value=p[i],
            p_adjusted=p_adj[i],
            secondary_reading=verdict_of(0.0, p_adj[i], settings.alpha, factor),
            method="product of stopped e-values across scenarios",
            e_value=products[i],
            effect=_fixed_sample(pooled_effect_record(rows_of[a])),
        )
        for i, a in enumerate(arms)
    ]


def _fixed_sample(effect: PooledEffectRecord | None) -> PooledEffectRecord | None:
    """A sequential sweep's pooled effect, said to be a fixed-sample figure: the arms stopped on
    extreme data, which the interval does not account for.
    """
    if effect is None:
        return None
    return PooledEffectRecord.model_validate(
        effect.model_dump() | {"method": effect.method + FIXED_SAMPLE}
    )


def stopped_counts(rows: Sequence[VerdictRecord]) -> dict[str, int]:
    """Challengers by why they stopped."""
    return dict(Counter(r.sequential.stopped_for for r in rows if r.sequential is not None))
