"""The headline verdict under ``statistics.decide: test``: the adjusted test decides, the tier is
recorded beside it.

Order: the arm- and baseline-not-applied gates (facets contradicted or not reported) decide
first (the runs are not evidence about the arm, and no test is reported); a row with no test (the
baseline, no reference) keeps its tier.
Otherwise, from the test's statistical verdict after the family adjustment:

- ``significant`` → ``confirmed`` (``test-significant``);
- ``underpowered`` → ``inconclusive`` (``test-underpowered``): no outcome at these samples could
  reach alpha once adjusted;
- ``not-significant`` → with a declared ``min_effect`` d: ``not-confirmed``
  (``test-rules-out-effect``) when the effect interval excludes an effect of d in the direction
  tested (:func:`rules_out`), else
  ``inconclusive`` (``test-inconclusive``); without one, ``not-confirmed``
  (``test-not-significant``), the interval stated so a reader sees what was not ruled out.

The effect interval (Newcombe's paired interval, 95%) is a fixed-sample figure; it is the
declared effect's yardstick, not a second test.
"""

from __future__ import annotations

from dataclasses import dataclass

from counterfact.records.parts import EffectRecord
from counterfact.records.summary import StatisticsRecord
from counterfact.records.vocabulary import Decider, Reason, StatisticalVerdict, Verdict
from counterfact.verdicts.applied import BASELINE_NOT_APPLIED, NOT_APPLIED

GATES = NOT_APPLIED
"""Tier reasons that decide first, whatever ``decide`` says."""


@dataclass(frozen=True)
class Headline:
    """A row's headline verdict and who decided it."""

    verdict: Verdict
    reason: Reason
    decided_by: Decider
    sentence: str | None = None
    """The test's decision in words (None when the tier decided)."""


def _interval(effect: EffectRecord | None) -> str:
    if effect is None:
        return "no effect interval (no pairs)"
    return (
        f"the flip-rate difference (arm minus baseline) is {effect.diff:+.2f}, "
        f"{effect.level:.0%} CI [{effect.low:+.2f}, {effect.high:+.2f}]"
    )


def headline(
    tier: tuple[Verdict, Reason],
    statistical: StatisticalVerdict | None,
    effect: EffectRecord | None,
    settings: StatisticsRecord,
    withheld: Reason | None = None,
) -> Headline:
    """The verdict a row leads with (see the module docstring); ``withheld``: why the row has
    no test (a failed manifest check of the arm or the baseline), which then decides.
    """
    verdict, reason = tier
    if settings.decide == "test" and withheld in GATES:
        sentence = None
        if reason != withheld:  # the tier order put another reason first: say the gate's
            who = "baseline's" if withheld in BASELINE_NOT_APPLIED else "arm's"
            how = (
                "do not report a declared facet"
                if withheld.endswith("facet-not-reported")
                else "contradict its declared facets"
            )
            sentence = (
                f"Inconclusive ({withheld}): the {who} manifests {how}, so the runs are not "
                "evidence about the arm and it gets no test."
            )
        return Headline("inconclusive", withheld, "tiers", sentence)
    if settings.decide == "tiers" or statistical is None or reason in GATES:
        return Headline(verdict, reason, "tiers")
    if statistical == "significant":
        sentence = (
            f"Confirmed by the test: the arm flips the answer {_WAY[settings.alternative]} "
            f"(significant at {settings.alpha:g} once adjusted); {_interval(effect)}."
        )
        return Headline("confirmed", "test-significant", "test", sentence)
    if statistical == "underpowered":
        sentence = (
            "Inconclusive by the test: at these samples no outcome could be significant once "
            "adjusted (see the test below for how many samples can)."
        )
        return Headline("inconclusive", "test-underpowered", "test", sentence)
    d = settings.min_effect
    shown = f"no significant difference ({_WAY[settings.alternative]})"
    if d is None:
        sentence = (
            f"Not confirmed by the test: {shown} at {settings.alpha:g}; {_interval(effect)} — "
            "an effect inside that interval is not ruled out."
        )
        return Headline("not-confirmed", "test-not-significant", "test", sentence)
    if effect is not None and rules_out(effect, d, settings):
        sentence = (
            f"Not confirmed by the test: {shown}, and {_interval(effect)}, which rules out the "
            f"declared minimal effect {d:g}."
        )
        return Headline("not-confirmed", "test-rules-out-effect", "test", sentence)
    sentence = (
        f"Inconclusive by the test: {shown}, but {_interval(effect)}, which does not rule out "
        f"the declared minimal effect {d:g}; raise samples."
    )
    return Headline("inconclusive", "test-inconclusive", "test", sentence)


_WAY = {
    "greater": "more often than the baseline",
    "less": "less often than the baseline",
    "two-sided": "more or less often than the baseline",
}


def rules_out(effect: EffectRecord, d: float, settings: StatisticsRecord) -> bool:
    """True when the effect interval excludes an effect of at least ``d`` in the direction
    tested (``greater``: an increase of d; ``less``: a decrease; ``two-sided``: either).
    """
    if settings.alternative == "greater":
        return effect.high < d
    if settings.alternative == "less":
        return effect.low > -d
    return effect.high < d and effect.low > -d
