"""The report's figures, drawn with matplotlib and returned as inline SVG text.

matplotlib is imported here only, when a report is built (the CLI's start stays fast). Figures
use the object API (``matplotlib.figure.Figure``), so no global backend or pyplot state is
touched, and SVG text stays text (``svg.fonttype: none``): the report opens offline, needs no
font files, and its labels can be searched.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import wraps
from typing import Any

BASE_COLOUR = "#4c72b0"
ARM_COLOUR = "#dd8452"
FLOOR_COLOUR = "#c44e52"


@dataclass(frozen=True)
class Series:
    """One arm's numbers for a figure."""

    label: str
    similarities: Sequence[float]
    """Per-seed similarity to the reference (may be empty)."""
    rate: float | None
    """Flip rate, flips / samples (None without a reference)."""
    low: float | None
    high: float | None


STYLE: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "counterfact",
    "text.parse_math": False,  # an id like "price_$5_$" is text, not maths
}
"""Text stays text; ids are stable, so the same records give the same file. Applied with
``rc_context`` around each figure: the caller's own matplotlib settings are left alone."""
LABEL_CHARS = 40
"""Axis labels are cut to this many characters (ids of any length keep the layout)."""


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def to_svg(fig: Any) -> str:
    """The figure as an ``<svg>`` element (no XML prolog), ready to inline in HTML."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.find("<svg") :]


def _label(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def styled(draw: Any) -> Any:
    """Run ``draw`` under :data:`STYLE` (applied while text is created and while saving)."""

    @wraps(draw)
    def inner(*args: Any, **kwargs: Any) -> Any:
        from matplotlib import rc_context

        with rc_context(STYLE):
            return draw(*args, **kwargs)

    return inner


def _jitter(n: int) -> list[float]:
    """Deterministic vertical spread for a strip plot (a golden-ratio sequence in [-0.2, 0.2])."""
    return [((i * 0.6180339887) % 1.0 - 0.5) * 0.4 for i in range(n)]


@styled
def arm_figure(base: Series, arm: Series, floor: float | None, title: str) -> str:
    """Two panels for one challenger: per-seed similarity of baseline and arm against the
    baseline's null-band floor (a strip plot), and both flip rates with their 95% intervals
    (a forest plot).
    """
    fig = _figure(7.5, 1.9)
    strip, forest = fig.subplots(1, 2, width_ratios=[3, 2])
    for row, (series, colour) in enumerate(((base, BASE_COLOUR), (arm, ARM_COLOUR))):
        ys = [row + j for j in _jitter(len(series.similarities))]
        strip.scatter(list(series.similarities), ys, s=14, color=colour, alpha=0.75)
        _forest_row(forest, row, series, colour)
    if floor is not None and math.isfinite(floor):
        strip.axvline(floor, color=FLOOR_COLOUR, linestyle="--", linewidth=1)
        strip.text(floor, 1.45, f" null-band floor {floor:.3f}", color=FLOOR_COLOUR, fontsize=7)
    labels = [_label(base.label), _label(arm.label)]
    for axis in (strip, forest):
        axis.set_yticks([0, 1], labels=labels, fontsize=8)
        axis.set_ylim(-0.6, 1.7)
        axis.tick_params(axis="x", labelsize=7)
    strip.set_xlim(-0.02, 1.02)
    strip.set_xlabel("similarity to the reference, per seed", fontsize=8)
    forest.set_xlim(-0.02, 1.02)
    forest.set_xlabel("flip rate, 95% interval", fontsize=8)
    fig.suptitle(_label(title) if len(title) > 2 * LABEL_CHARS else title, fontsize=9)
    return to_svg(fig)


def _forest_row(axis: Any, row: int, series: Series, colour: str) -> None:
    if series.rate is None:
        axis.text(0.02, row, "no reference", fontsize=7, va="center")
        return
    if series.low is not None and series.high is not None:
        axis.hlines(row, series.low, series.high, color=colour, linewidth=2)
    axis.plot([series.rate], [row], "o", color=colour)


@dataclass(frozen=True)
class ProbeBar:
    """One probe of a bisection, in execution order."""

    label: str
    flips: int
    samples: int
    flipped: bool
    cached: bool
    speculative: bool


@styled
def probes_figure(probes: Sequence[ProbeBar]) -> str:
    """The bisection's probes in order: flips/samples per probe, flipped ones highlighted,
    cache hits hatched, speculative ones outlined.
    """
    height = max(1.6, 0.28 * len(probes) + 0.8)
    fig = _figure(7.5, height)
    axis = fig.subplots()
    for i, probe in enumerate(probes):
        share = probe.flips / probe.samples if probe.samples else 0.0
        axis.barh(
            i,
            share,
            color=FLOOR_COLOUR if probe.flipped else BASE_COLOUR,
            hatch="//" if probe.cached else None,
            edgecolor="black" if probe.speculative else "none",
        )
        axis.text(share + 0.01, i, f"{probe.flips}/{probe.samples}", va="center", fontsize=7)
    axis.set_yticks(range(len(probes)), labels=[_label(p.label) for p in probes], fontsize=7)
    axis.invert_yaxis()
    axis.set_xlim(0, 1.15)
    axis.set_xlabel("share of seeds flipped (red: the probe flipped; hatched: cache hit)")
    return to_svg(fig)
