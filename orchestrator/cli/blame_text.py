"""What ``counterfact blame`` prints for one call: each culprit set with its parts' text, the
effect, the standing, what the search spent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from counterfact.records.blame import BlameLine, BlameRecord
from counterfact.records.runs import RunRecord

CLIP = 120
"""Characters of a part's text shown."""


def clip(text: str, width: int = CLIP) -> str:
    """``text`` on one line, cut to ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _effect(record: BlameRecord, culprit: Sequence[str]) -> str:
    probe = next((p for p in record.probes if sorted(p.ablated) == sorted(culprit)), None)
    if probe is None:
        return ""
    moved = "made the answer right" if record.expect is not None else "changed the answer"
    p = f", p {probe.p_value:.3g}" if probe.p_value is not None else ""
    return f"removing it {moved} on {probe.flips} of {probe.samples} seeds{p}"


def _spend(runs: Sequence[RunRecord]) -> str:
    tokens = sum((r.cost or {}).get("tokens", 0.0) for r in runs if not r.from_cache)
    usd = [r.cost["usd"] for r in runs if r.cost and "usd" in r.cost and not r.from_cache]
    found = f"tokens {tokens:,.0f}" if tokens else "no tokens reported"
    return found + (f", usd {sum(usd):.4f}" if usd else "")


def _judge(record: BlameRecord) -> list[str]:
    """The model judge's calls and cost (``; judge 12 calls, tokens 1,234, usd 0.0012``) and
    its measured noise, or nothing without one.
    """
    from counterfact.verdicts.report.judgenote import judge_notes

    spend = record.execution.spend
    judge = (spend.judge if spend else None) or {}
    if not judge:
        return [""]
    calls = int(judge.get("calls", 0))
    tokens = f", tokens {judge['tokens']:,.0f}" if judge.get("tokens") else ""
    usd = f", usd {judge['usd']:.4f}" if "usd" in judge else ""
    now = sum(j.calls for j in record.judges or ())
    line = f"; judge {calls:,} calls ({now:,} now){tokens}{usd}"
    return [line, *(f"  note: {note}" for note in judge_notes(record.judges, []))]


def _replay(record: BlameRecord) -> str:
    r = record.replay
    if record.reason == "unstable-baseline" and record.expect is not None:
        return (
            f"  replay: the replay already gives the expected answer on {r.seeds - r.reproduced} "
            f"of {r.seeds} seeds before anything was removed: there is no wrong answer to blame "
            "here (or the server, the model or its sampling differ from the recorded call)"
        )
    if record.reason == "unstable-baseline":
        said = "the recorded answer" if r.recorded_answer is not None else "its seed-0 answer"
        return (
            f"  replay: the replay gives {said} on {r.reproduced} of {r.seeds} seeds: "
            "the server, the model or its sampling differ from the recorded call, so nothing "
            "was searched (another --comparator, such as similarity, may judge a reworded "
            "answer the same)"
        )
    if record.expect is not None:
        what = "the expected answer was missed"
    elif r.recorded_answer is None:
        what = "no answer was recorded: the replay's seed-0 answer is the one explained; it held"
    else:
        what = "the recorded answer held"
    return f"  replay: {what} on {r.reproduced} of {r.seeds} seeds before anything was removed"


def render_blame(record: BlameRecord, runs: Sequence[RunRecord]) -> str:
    """The console text for one blamed call."""
    suspects = sum(p.suspect for p in record.parts)
    seeds = "seeds vary" if record.seeds_vary else "seeds agree"
    lines = [
        f"blame {record.call!r} (model {record.model}; {len(record.parts)} parts, {suspects} "
        f"suspects ranked {record.rank.method}; {record.probes[0].samples if record.probes else 0} "
        f"seeds a probe, {record.decide}; {seeds}): {record.verdict} ({record.reason})",
        _replay(record),
    ]
    for i, culprit in enumerate(record.culprits, 1):
        lines.append(f"  culprit set {i}: {{{', '.join(culprit)}}} — {_effect(record, culprit)}")
        lines += [f"    {part}: {clip(record.text_of(part))!r}" for part in culprit]
    lines.append(f"  {record.claim}")
    if record.decide == "majority" and record.seeds_vary:
        lines.append(
            "  warning: the replies differed across seeds under the majority rule: the model "
            "samples even here, so run again with --decide test (and --samples 8 or more) "
            "before trusting this"
        )
    ran = record.execution
    reused = f", {ran.runs_reused} read back" if ran.runs_reused else ""
    ranking = f" (+{record.ranking_probes} ranking)" if record.ranking_probes else ""
    judged, *notes = _judge(record)
    lines.append(
        f"  spent: {record.probes_executed} probes{ranking}, {ran.runs_used} model calls "
        f"now{reused} "
        f"(the search's runs: {_spend(runs)}{judged})"
    )
    return "\n".join([*lines, *notes])


SHOWN_CALLS = 10
"""Calls printed one line each before the rest are only counted."""


def call_line(line: BlameLine) -> str:
    """One call's outcome on one line."""
    if line.error is not None:
        return f"  {line.call}: not blamed — {clip(line.error, 160)}"
    sets = "; ".join("{" + ", ".join(c) + "}" for c in line.culprits) or "no part"
    first = line.culprit_text[0][0] if line.culprit_text and line.culprit_text[0] else ""
    shown = f" — {clip(first, 70)!r}" if first else ""
    return f"  {line.call}: {line.verdict} ({line.reason}): {sets}{shown}"


def render_summary(lines: Sequence[BlameLine], top: Sequence[tuple[int, str, list[str]]]) -> str:
    """How many calls were blamed on which parts, and the parts blamed most often."""
    verdicts = Counter(line.verdict or "not blamed" for line in lines)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
    out = [f"{len(lines)} call(s): {counts}"]
    if top:
        out.append("blamed most often:")
        out += [f"  {n} call(s): {clip(text, 90)!r} (as {', '.join(ids)})" for n, text, ids in top]
    calls = sum(line.execution.runs_used for line in lines if line.execution is not None)
    probes = sum(line.probes_executed for line in lines)
    out.append(f"model calls now: {calls:,} over {probes:,} probes")
    return "\n".join(out)
