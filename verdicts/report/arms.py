"""The lead of ``report.html``: one verdict per challenger over the whole question set
(``summary.arms``, summary schema 7), with its notes and one forest plot for every challenger;
and the header's spend line.

An older run directory has no ``arms``: the section is left out and the page starts with the
per-question results, as it did.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from counterfact.records.arms import ArmVerdictRecord
from counterfact.records.execution import SpendRecord
from counterfact.verdicts.planning.estimate import spend_text as amounts_text
from counterfact.verdicts.report.plots import effects_of, forest_figure
from counterfact.verdicts.wording.arms import P_FLOOR


def _amounts(costs: dict[str, float]) -> str:
    """Money to the cent, counts whole (the wording ``plan`` and ``validate`` use too)."""
    return amounts_text(costs)


def spend_text(spend: SpendRecord | None) -> str:
    """``usd 0.45, tokens 123,456 over 200 runs (base usd 0.07, ...; c1 ...)``, or that no run
    reported a cost (also for summaries before schema 7, which did not count it).
    """
    refused = _refused(spend) + _judge_spend(spend)
    if spend is None or not spend.total:
        return "no run reported a cost" + refused
    arms = "; ".join(f"{arm} {_amounts(costs)}" for arm, costs in spend.by_arm.items())
    return f"{_amounts(spend.total)} over {spend.runs_with_cost:,} runs ({arms}){refused}"


def _judge_spend(spend: SpendRecord | None) -> str:
    """``; judge usd 0.02, tokens 1,234 over 40 calls (base 12 calls; alt 28 calls)`` (recorded
    calls included), or nothing.
    """
    if spend is None or not spend.judge:
        return ""
    costs = {k: v for k, v in spend.judge.items() if k != "calls"}
    calls = int(spend.judge.get("calls", 0))
    by_arm = spend.judge_by_arm or {}
    arms = "; ".join(f"{arm} {_calls(c)}" for arm, c in by_arm.items())
    return f"; judge {_amounts(costs)} over {calls:,} calls" + (f" ({arms})" if arms else "")


def _calls(costs: dict[str, float]) -> str:
    """``usd 0.01 over 12 calls`` (``12 calls`` without a price)."""
    usd = costs.get("usd")
    calls = f"{int(costs.get('calls', 0)):,} calls"
    return calls if usd is None else f"usd {usd:.4g} over {calls}"


def _refused(spend: SpendRecord | None) -> str:
    if spend is None or not spend.runs_cost_refused:
        return ""
    return (
        f"; {spend.runs_cost_refused:,} run(s) recorded a cost no run can spend (not finite, "
        "negative or over 1e15): left out of every total (runs.jsonl keeps the line)"
    )


def _p(p: float | None) -> str:
    if p is None:
        return ""
    if p < P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def _effect(arm: ArmVerdictRecord) -> str:
    e = arm.effect
    if e is None:
        return "no question could be tested"
    return f"{e.diff:+.3f} [{e.low:+.3f}, {e.high:+.3f}] ({e.level:.0%})"


def _standing(arm: ArmVerdictRecord) -> str:
    head = f"not-sure ({len(arm.reasons)})" if arm.standing == "not-sure" else arm.standing
    items = "".join(
        f"<li><code>{escape(d.code)}</code> ({'at least ' if d.at_least else ''}{d.count}): "
        f"{escape(d.detail)}</li>"
        for d in arm.reasons
    )
    reasons = f'<ul class="reasons">{items}</ul>' if items else ""
    return f'<td class="{escape(arm.standing)}">{escape(head)}{reasons}</td>'


def _row(arm: ArmVerdictRecord) -> str:
    stat = arm.statistical_verdict or "untested"
    withheld = f" ({arm.questions_withheld} withheld)" if arm.questions_withheld else ""
    moved = f"breaks {arm.questions_up} / fixes {arm.questions_down} of {arm.questions}{withheld}"
    if arm.flips is not None and arm.baseline_flips is not None and arm.pairs:
        moved += (
            f"; flips {arm.flips / arm.pairs:.0%} vs the baseline's "
            f"{arm.baseline_flips / arm.pairs:.0%}"
        )
    pairs = f"{arm.effective_pairs:,.0f} of {arm.pairs:,}"
    return (
        f'<tr data-arm-verdict="{escape(arm.arm)}" title="{escape(arm.summary)}">'
        f"<td>{escape(arm.arm)}</td>"
        f'<td class="{escape(arm.verdict)}">{escape(arm.verdict)}</td>'
        f'<td class="{escape(stat)}">{escape(stat)}</td><td>{escape(_effect(arm))}</td>'
        f"<td>{_p(arm.p_value)}</td><td>{_p(arm.p_adjusted)}</td><td>{escape(moved)}</td>"
        f"<td>{escape(pairs)}</td>{_standing(arm)}</tr>"
    )


def _notes(arms: Sequence[ArmVerdictRecord]) -> str:
    items = "".join(
        f"<li><b>{escape(a.arm)}</b>: {escape(note)}</li>" for a in arms for note in a.notes
    )
    return f'<ul class="arm-notes">{items}</ul>' if items else ""


def _axis_label(arms: Sequence[ArmVerdictRecord]) -> str:
    levels = sorted({a.effect.level for a in arms if a.effect is not None})
    level = "/".join(f"{x:.0%}" for x in levels)
    return (
        f"flip-rate difference over the questions, arm minus baseline ({level} interval; "
        "filled: significant)"
    )


def arm_forest(arms: Sequence[ArmVerdictRecord]) -> str:
    """One figure: each challenger's effect with its interval, a line at zero."""
    effects = effects_of(arms)
    if not effects:
        return ""
    svg = forest_figure(effects, _axis_label(arms), zoom=True)
    return f'<figure class="forest arm-forest"><div class="plot">{svg}</div></figure>'


def arms_section(arms: Sequence[ArmVerdictRecord]) -> str:
    """The arm-level matrix (a row per challenger), its notes, then the forest plot; empty for
    a run directory written before arm-level verdicts.
    """
    if not arms:
        return ""
    head = (
        "<tr><th>challenger</th><th>verdict</th><th>test</th><th>effect [interval] (level)</th>"
        "<th>p</th><th>p (adj.)</th><th>questions moved</th><th>effective pairs</th>"
        "<th>standing</th></tr>"
    )
    effect = next((a.effect.method for a in arms if a.effect is not None), "")
    method = escape(arms[0].method) + (f"; the interval: {escape(effect)}" if effect else "")
    return (
        '<h2 id="arms">Each challenger over the whole question set</h2>'
        f"<p>One verdict per challenger: {method}; p adjusted over the challengers. The "
        "per-question rows below are the detail.</p>"
        f'<table class="arms">{head}{"".join(_row(a) for a in arms)}</table>'
        f"{_notes(arms)}{arm_forest(arms)}"
    )
