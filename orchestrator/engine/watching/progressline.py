"""The text of the terminal's progress line, built from numbers alone (no terminal, no clock).

``340/1,000, 18 in flight, 429s 42, conc 18/25, $1.23 of $20, 12.3 runs/s, ETA 00:53``:
runs done of the runs to do, runs in flight, rate-limit refusals (HTTP 429) waited out, the
throttle's current limit of the configured concurrency, spend so far (of the budget), the run
rate and the time left at that rate; ``2 failed`` when runs failed. A part that does not apply
is left out (no 429 part before the first refusal, no concurrency part when runs do not
overlap, no spend part when nothing reports a cost and no budget is set). When the line would
be wider than ``width``, the least telling parts go first (the rate, then the concurrency,
the in-flight count, the spend, the 429s, the ETA), never the count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

SEP = ", "
DROP_ORDER = ("rate", "conc", "in_flight", "spend", "429", "eta", "failed")
"""The parts left out first when the line is too wide."""


@dataclass(frozen=True)
class Shown:
    """What the progress line shows."""

    done: int
    """Runs finished (of this invocation's runs to do)."""
    total: int
    """Runs to do."""
    failed: int = 0
    rate: float | None = None
    """Runs finished per second (None: none yet)."""
    in_flight: int | None = None
    """Runs handed to the executor and not yet back (None: not known)."""
    waited_429: int = 0
    concurrency: int | None = None
    """The throttle's current limit (None: runs do not overlap)."""
    concurrency_max: int | None = None
    spend: Mapping[str, float] = field(default_factory=dict)
    budget: Mapping[str, float] = field(default_factory=dict)


def progress_text(shown: Shown, width: int | None = None) -> str:
    """The line's text, at most ``width`` characters when the count alone fits (None: any)."""
    parts = _parts(shown)
    for name in DROP_ORDER:
        if width is None or len(SEP.join(parts.values())) <= width:
            break
        parts.pop(name, None)
    return SEP.join(parts.values())


def _parts(s: Shown) -> dict[str, str]:
    parts = {"count": f"{s.done:,}/{s.total:,}"}
    if s.in_flight is not None:
        parts["in_flight"] = f"{s.in_flight:,} in flight"
    if s.waited_429:
        parts["429"] = f"429s {s.waited_429:,}"
    if s.concurrency is not None:
        ceiling = "" if s.concurrency_max is None else f"/{s.concurrency_max:,}"
        parts["conc"] = f"conc {s.concurrency:,}{ceiling}"
    spend = spend_text(s.spend, s.budget)
    if spend:
        parts["spend"] = spend
    if s.rate:
        parts["rate"] = f"{s.rate:,.1f} runs/s" if s.rate < 100 else f"{s.rate:,.0f} runs/s"
        left = s.total - s.done
        if left > 0:
            parts["eta"] = f"ETA {clock_text(left / s.rate)}"
    if s.failed:
        parts["failed"] = f"{s.failed:,} failed"
    return parts


def spend_text(spend: Mapping[str, float], budget: Mapping[str, float]) -> str:
    """``$1.23 of $20`` per budgeted key; without a budget the spend in ``usd`` (else in the first
    key reported); empty when there is neither.
    """
    if budget:
        keys = list(budget)
    elif "usd" in spend:
        keys = ["usd"]
    else:
        keys = sorted(spend)[:1]
    shown = []
    for key in keys:
        text = _amount(key, spend.get(key, 0.0))
        if key in budget:
            text += f" of {_amount(key, budget[key], limit=True)}"
        shown.append(text)
    return SEP.join(shown)


def _amount(key: str, value: float, *, limit: bool = False) -> str:
    """Dollars as money (``$1.23``, ``$0.012``; a limit without trailing zeros: ``$20``), other
    units compact with the unit (``48.2k tokens``).
    """
    if key == "usd":
        if limit:
            return "$" + f"{value:,.2f}".rstrip("0").rstrip(".")
        if 0 < value < 0.1:
            return f"${value:.2g}"
        return f"${value:,.2f}"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix} {key}"
    return f"{value:.3g} {key}"


def clock_text(seconds: float) -> str:
    """``mm:ss`` under an hour, ``h:mm:ss`` from there."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes:02d}:{secs:02d}"
