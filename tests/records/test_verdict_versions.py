"""``verdicts.jsonl`` lines written before the tier-level fields became :class:`TierRecord`
(a base :class:`VerdictRecord` extends) still load, and a line written now holds the same fields.

``old/verdicts-v10.jsonl`` was written by the commit before (a79025e): the sweep of
``scripts/check_same_records.py`` (``bench_runners.py:varied``, 2 scenarios, the arms base,
``flips``, ``same`` and a ``placebo: fresh`` arm, 60 samples, in-process). Its keys are in the
order the record declared them then (the decision and the claim before the seeds); a line now
opens with ``schema_version``, then the tier-level fields.
"""

from __future__ import annotations

import json
from pathlib import Path

from counterfact.records.verdicts import TierRecord, VerdictRecord

OLD = Path(__file__).parent / "old" / "verdicts-v10.jsonl"


def _old_lines() -> list[dict[str, object]]:
    return [json.loads(line) for line in OLD.read_text(encoding="utf-8").splitlines()]


def test_a_version_10_line_loads_and_writes_the_same_fields_and_values() -> None:
    for data in _old_lines():
        record = VerdictRecord.model_validate(data)
        again = json.loads(record.model_dump_json())
        assert again == data
        assert list(again)[:3] == ["schema_version", "scenario", "arm"]


def test_the_tier_fields_of_an_old_line_are_its_tier_record() -> None:
    rows = [VerdictRecord.model_validate(d) for d in _old_lines()]
    flips = next(r for r in rows if r.scenario == "s1" and r.arm == "flips")
    tier = TierRecord.model_validate(flips.model_dump(include=set(TierRecord.model_fields)))
    assert (tier.tier_verdict, tier.tier_reason) == (flips.tier_verdict, flips.tier_reason)
    assert tier.seed_list() == flips.seed_list() and tier.flips == flips.flips
    assert flips.tier_verdict is not None and flips.verdict is not None
    baseline = next(r for r in rows if r.is_baseline)
    assert (baseline.verdict, baseline.tier_verdict, baseline.decided_by) == (None, None, "tiers")
