"""The notes printed after the verdict table on a sweep a model judged: how often the judge
disagreed with itself, and whether that noise is large enough to decide verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence

from counterfact.records.summary import JudgeRecord
from counterfact.records.verdicts import VerdictRecord


def _smallest_deciding_share(rows: Sequence[VerdictRecord]) -> tuple[float, str] | None:
    """The smallest flip share (flips / samples) of a confirmed challenger row, and the row."""
    found = [
        (r.flips / r.samples, f"{r.scenario}/{r.arm}")
        for r in rows
        if not r.is_baseline and r.verdict == "confirmed" and r.flips is not None and r.samples
    ]
    return min(found) if found else None


def judge_notes(judges: Sequence[JudgeRecord] | None, rows: Sequence[VerdictRecord]) -> list[str]:
    """One note per judge on its measured self-disagreement, and one more when the interval's
    upper end reaches the smallest flip share that confirmed a row (the judge's own noise could
    then have made those flips).
    """
    notes: list[str] = []
    smallest = _smallest_deciding_share(rows)
    for judge in judges or ():
        unparsed = (
            f"; {judge.not_verdicts} repl(ies) were not a verdict (those outputs are unscored)"
            if judge.not_verdicts
            else ""
        )
        if judge.unavailable:
            unparsed += (
                f"; {judge.unavailable} call(s) were refused or left unanswered (those outputs "
                "are unscored: run again to ask them)"
            )
        if judge.disagreement is None or judge.high is None:
            notes.append(
                f"judge {judge.model}: {judge.judgments:,} judgment(s), {judge.calls:,} call(s) "
                f"this session; its noise is not measured ({_unmeasured(judge)}: recheck "
                f"{judge.recheck:g}){unparsed}"
            )
            continue
        notes.append(
            f"judge {judge.model}: disagreed with itself on {judge.disagreed} of "
            f"{judge.rechecked} rechecked judgment(s) ({judge.disagreement:.1%}, 95% Wilson "
            f"interval {judge.low:.1%} to {judge.high:.1%}){unparsed}"
        )
        if smallest is not None and judge.high >= smallest[0]:
            notes.append(
                f"the judge's noise may decide verdicts: its self-disagreement could be as high "
                f"as {judge.high:.1%}, at least the {smallest[0]:.1%} flip share that confirmed "
                f"{smallest[1]}; recheck more judgments, or use a steadier judge"
            )
    notes += [_apart(judge) for judge in judges or () if judge.pacing == "own-beside-runs"]
    return notes


def _apart(judge: JudgeRecord) -> str:
    """The judge calls the runs' endpoint with their key, but was paced apart from them."""
    return (
        f"judge {judge.model} calls the runs' endpoint with their key, but its calls were paced "
        "apart from the runs' (no runs' slots were there to share when it judged: every run "
        "was read back or cached, or the runs' event loop was given up): its own limit (at "
        "most 8 in flight) beside the runs' executor.concurrency and rate_limit, so a 429 met "
        "by one slows only that one"
    )


def _unmeasured(judge: JudgeRecord) -> str:
    """Why no self-disagreement was measured: nothing was asked twice, or what was gave no
    verdict on one side (``rechecked`` counts pairs of two verdicts).
    """
    if judge.recheck == 0 or judge.calls + judge.read_back <= judge.judgments:
        return "no judgment was asked twice"
    return "no rechecked judgment gave a verdict both times"
