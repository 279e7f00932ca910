"""The verdict table printed after a sweep: arm, verdict, flips/samples, mean similarity, reason,
the statistical verdict with its adjusted p, and the cost class of ablation arms when any has one.
"""

from __future__ import annotations

from collections.abc import Sequence

from counterfact.probes.stats import baseline_stable
from counterfact.records.summary import SequentialSummary
from counterfact.records.verdicts import VerdictRecord
from counterfact.verdicts.standing import standing_cell

_HEADERS = (
    "scenario",
    "arm",
    "verdict",
    "flips",
    "mean sim",
    "reason",
    "test",
    "cost class",
    "standing",
)
_CLASS = len(_HEADERS) - 2


def _short(rec: VerdictRecord) -> tuple[int, int]:
    """Declared seeds that are not samples: (runs that failed, seeds never run). Records before
    version 8 count every one as failed.
    """
    unrun = len(rec.missing_seed_list())
    return rec.samples_declared - rec.samples - unrun, unrun


def _row(rec: VerdictRecord) -> tuple[str, ...]:
    flips = "n/a" if rec.flips is None else f"{rec.flips}/{rec.samples}"
    failed, unrun = _short(rec)
    if failed or unrun:
        parts = [f"{failed} failed"] if failed else []
        parts += [f"{unrun} not run"] if unrun else []
        flips += f" ({', '.join(parts)})"
    mean = "n/a" if rec.similarity is None else f"{rec.similarity.mean:.3f}"
    verdict = "baseline" if rec.is_baseline else str(rec.verdict)
    if rec.is_baseline:
        reason = (
            "stable"
            if rec.flips is not None
            and baseline_stable(rec.flips)
            and rec.samples == rec.samples_declared
            else "UNSTABLE"
        )
        if failed or unrun:
            reason = "runs-failed" if failed else "runs-missing"
    else:
        reason = str(rec.reason)
    return (
        rec.scenario,
        rec.arm,
        verdict,
        flips,
        mean,
        reason,
        _test(rec),
        rec.cost_class or "",
        standing_cell(rec),
    )


def _test(rec: VerdictRecord) -> str:
    """The statistical verdict and its (adjusted) p: ``not-significant p=0.094``."""
    if rec.statistical_verdict is None or rec.test is None:
        return ""
    p = rec.test.p_adjusted if rec.test.p_adjusted is not None else rec.test.p_value
    if rec.statistical_verdict == "underpowered":
        return "underpowered"
    return f"{rec.statistical_verdict} p={p:.2g}"


def render_table(records: Sequence[VerdictRecord], similarity: str | None = None) -> str:
    """A plain-text table, one row per (scenario, arm); the scenario column only when >1.
    ``similarity`` names the measure the "mean sim" column shows (``text``, ``embedding``, ...).
    """
    if not records:
        return "(no verdicts)"
    rows = [_row(r) for r in records]
    multi = len({r.scenario for r in records}) > 1
    with_class = any(r.cost_class for r in records)
    with_test = any(r.statistical_verdict for r in records)
    with_standing = any(r.standing != "not-assessed" for r in records)
    shown = {0: multi, _CLASS - 1: with_test, _CLASS: with_class, _CLASS + 1: with_standing}
    keep = [i for i in range(len(_HEADERS)) if shown.get(i, True)]
    label = f"mean sim ({similarity})" if similarity else "mean sim"
    headers = tuple(label if _HEADERS[i] == "mean sim" else _HEADERS[i] for i in keep)
    rows = [tuple(r[i] for i in keep) for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )
    return "\n".join(lines)


def sequential_line(seq: SequentialSummary) -> str:
    """One line on a sequential sweep: runs recorded against the cap, and why arms stopped."""
    why = ", ".join(f"{n} {k}" for k, n in sorted(seq.stopped.items()))
    return (
        f"sequential: {seq.runs_recorded} runs recorded of {seq.runs_at_max_samples} at "
        f"max_samples={seq.max_samples} ({seq.runs_saved} saved); arms stopped: {why or 'none'}"
    )
