"""Judgements to verdict records, in one place: each row validated once, its claim composed once.

The claim reads: under ``decide: test``, the test's decision first, then the tier's claim (said
to agree or to differ); under ``tiers``, the tier's claim. Then, for a sequential challenger, why
and where it stopped; then the test in plain words (once its family adjusted it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from counterfact.records.parts import TestRecord
from counterfact.records.summary import StatisticsRecord
from counterfact.records.verdicts import VerdictRecord
from counterfact.records.vocabulary import Standing
from counterfact.verdicts.decide import Headline, headline
from counterfact.verdicts.family import adjust_family, test_sentence
from counterfact.verdicts.judgement import Adjusted, Judgement, shallow
from counterfact.verdicts.standing import Doubt, evidence_doubts, standing_of, standing_sentence
from counterfact.verdicts.stopped import stop_sentence


def test_record(j: Judgement, adjusted: Adjusted | None, s: StatisticsRecord) -> TestRecord | None:
    """The row's test as recorded: the result, the level, and its family's adjustment."""
    if j.test is None:
        return None
    extra: dict[str, Any] = {"alpha": s.alpha}
    if adjusted is not None:
        extra |= {"p_adjusted": adjusted.p_adjusted, "adjustment": adjusted.adjustment}
    return TestRecord.model_validate(shallow(j.test) | extra)


def compose_claim(
    j: Judgement,
    test: TestRecord | None,
    adjusted: Adjusted | None,
    s: StatisticsRecord,
    head: Headline | None = None,
) -> str:
    """The row's claim: the decision, the tier's claim, the stopping sentence, the test's."""
    parts = [j.claim]
    if head is not None and head.sentence is not None:
        tier = (j.tier.tier_verdict, j.tier.tier_reason)
        if (head.verdict, head.reason) == tier:
            note = "The seed tiers agree:"
        elif head.verdict == tier[0]:
            note = f"The seed tiers also say {tier[0]}, for another reason ({tier[1]}):"
        else:
            note = f"The seed tiers alone would say {tier[0]} ({tier[1]}):"
        parts = [head.sentence, note, j.claim]
    if j.sequential is not None:
        parts.append(stop_sentence(j.sequential, withheld=j.withheld is not None))
    if test is not None and adjusted is not None:
        parts.append(test_sentence(test, adjusted.verdict, s))
    return " ".join(parts)


def _decided(j: Judgement, adjusted: Adjusted | None, s: StatisticsRecord) -> Headline | None:
    """A challenger's headline (None for the baseline); without a test, or before its family is
    known, the tier decides.
    """
    verdict, reason = j.tier.tier_verdict, j.tier.tier_reason
    if verdict is None or reason is None:
        return None
    statistical = adjusted.verdict if adjusted else None
    return headline((verdict, reason), statistical, j.effect, s, j.withheld)


def _standing(
    j: Judgement, adjusted: Adjusted | None, head: Headline | None
) -> tuple[Standing, list[Doubt], str]:
    """The row's standing, every doubt (the test's included) and, when not assessed, why
    (rule 25). Only the baseline row and a row without a successful run are not assessed; an
    inconclusive verdict is not sure, its first reason that it is inconclusive.
    """
    if j.unassessed is not None:
        return "not-assessed", [], j.unassessed
    tier = (j.tier.tier_verdict, j.tier.tier_reason)
    doubts = [
        *j.doubts,
        *evidence_doubts(
            has_test=j.test is not None,
            statistical=adjusted.verdict if adjusted else None,
            withheld=j.withheld,
            tier=tier,
            sequential=j.sequential,
        ),
    ]
    verdict, reason = (head.verdict, head.reason) if head is not None else tier
    if verdict == "inconclusive":
        doubts.insert(
            0,
            Doubt(
                "verdict-inconclusive",
                1,
                f"the verdict is inconclusive ({reason})",
            ),
        )
    return standing_of(doubts, assessed=True), doubts, ""


def verdict_record(
    j: Judgement, adjusted: Adjusted | None, settings: StatisticsRecord
) -> VerdictRecord:
    """One validated row (``adjusted`` None: the raw test, before its family is known)."""
    test = test_record(j, adjusted, settings)
    head = _decided(j, adjusted, settings)
    standing, doubts, why = _standing(j, adjusted, head)
    first = standing_sentence(standing, doubts, why)
    return VerdictRecord(
        **dict(j.tier),
        verdict=head.verdict if head is not None else j.tier.tier_verdict,
        reason=head.reason if head is not None else j.tier.tier_reason,
        decided_by=head.decided_by if head is not None else "tiers",
        claim=f"{first} {compose_claim(j, test, adjusted, settings, head)}",
        standing=standing,
        reasons=[d.record() for d in doubts],
        test=test,
        statistical_verdict=None if adjusted is None else adjusted.verdict,
        statistical_verdict_withheld=j.withheld,
        effect=j.effect,
        similarity_test=j.similarity_test,
        sequential=j.sequential,
    )


def verdict_rows(
    judgements: Sequence[Judgement], settings: StatisticsRecord
) -> list[VerdictRecord]:
    """Every row: each test adjusted over its family, then each record built once."""
    adjusted = adjust_family(judgements, settings)
    return [verdict_record(j, a, settings) for j, a in zip(judgements, adjusted, strict=True)]
