"""Each arm across scenarios: one line a person reads first (``prompt=v2: confirmed on 2 of 2
scenarios``), and its record for ``summary.json``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

from counterfact.records.summary import PooledEffectRecord, PooledRecord, RollupRecord
from counterfact.records.verdicts import VerdictRecord

_ORDER = ("confirmed", "inconclusive", "not-confirmed")


def rollup(rows: Sequence[VerdictRecord]) -> list[RollupRecord]:
    """One record per challenger, in first-appearance order."""
    by_arm: dict[str, list[VerdictRecord]] = defaultdict(list)
    for row in rows:
        if not row.is_baseline:
            by_arm[row.arm].append(row)
    out = []
    for arm, mine in by_arm.items():
        tiers = Counter(str(r.verdict) for r in mine)
        significant = sum(r.statistical_verdict == "significant" for r in mine)
        tested = sum(r.statistical_verdict in ("significant", "not-significant") for r in mine)
        withheld = sum(r.statistical_verdict_withheld is not None for r in mine)
        out.append(
            RollupRecord(
                arm=arm,
                scenarios=len(mine),
                verdicts=dict(tiers),
                significant=significant,
                tested=tested,
                withheld=withheld,
                summary=_line(arm, len(mine), tiers, significant, tested, withheld),
            )
        )
    return out


def _line(
    arm: str, n: int, tiers: Counter[str], significant: int, tested: int, withheld: int = 0
) -> str:
    parts = [f"{tiers[t]} {t}" for t in _ORDER if tiers[t]]
    tier_text = (
        f"{next(iter(tiers))} on {n} of {n} scenarios" if len(tiers) == 1 else ", ".join(parts)
    )
    test = f"; significant on {significant} of {tested} tested" if tested else ""
    if withheld:
        test += (
            f"; test withheld on {withheld} (the manifests show it did not take effect, or do "
            "not report a declared facet: left out of the adjustment and the pooled test)"
        )
    return f"{arm}: {tier_text}{test}"


def render_rollup(records: Sequence[RollupRecord]) -> str:
    """The roll-up section of the table: one line per arm."""
    return "\n".join(["across scenarios:", *(f"  {r.summary}" for r in records)])


def render_pooled(records: Sequence[PooledRecord]) -> str:
    """The pooled tests, one line per challenger (rule 18), labelled secondary: they count every
    seed pair as independent, so the arm-level verdict (over questions) is the headline.
    """
    lines = [
        "pooled across scenarios (secondary: seed-level, every seed pair counted as "
        "independent; the arm-level verdict is the headline):"
    ]
    for r in records:
        e = f", e-value {r.e_value:.3g}" if r.e_value is not None else ""
        lines.append(
            f"  {r.arm}: {r.secondary_reading} — {r.method} over {r.scenarios} scenarios, "
            f"{r.n10} vs {r.n01} discordant of {r.pairs} pairs{e}, p = {r.p_value:.3g}, "
            f"adjusted over the challengers {r.p_adjusted:.3g}"
        )
        if r.effect is not None:
            lines.append(f"    {effect_text(r.effect)}")
    return "\n".join(lines)


def effect_text(effect: PooledEffectRecord) -> str:
    """The pooled effect in words: the difference, its interval, and whether scenarios agree."""
    text = (
        f"pooled effect {effect.diff:+.2f} (flip-rate difference, arm minus baseline), "
        f"{effect.level:.0%} CI [{effect.low:+.2f}, {effect.high:+.2f}] clustered by scenario"
    )
    if effect.heterogeneous:
        named = f": {', '.join(effect.disagreeing)} stand out" if effect.disagreeing else ""
        return (
            f"{text}; the scenarios' effects disagree (heterogeneity p = "
            f"{effect.heterogeneity_p:.2g}, I² = {effect.i_squared:.0%}){named}"
        )
    return text
