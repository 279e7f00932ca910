"""The report's figures, drawn with matplotlib and returned as inline SVG text.

matplotlib is imported here only, when a report is built (the CLI's start stays fast). Figures
use the object API (``matplotlib.figure.Figure``), so no global backend or pyplot state is
touched, and SVG text stays text (``svg.fonttype: none``): the report opens offline, needs no
font files, and its labels can be searched.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import wraps
from typing import Any, Protocol

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
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],  # one name per text element, not a fallback list
}
"""Text stays text; ids are stable, so the same records give the same file. Applied with
``rc_context`` around each figure: the caller's own matplotlib settings are left alone."""
LABEL_CHARS = 40
"""Axis labels are cut to this many characters (ids of any length keep the layout)."""


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


INDENT = re.compile(r"\n[ \t]+")
"""matplotlib indents its SVG; a page of a thousand rows does not need the indentation."""


def to_svg(fig: Any) -> str:
    """The figure as an ``<svg>`` element (no XML prolog), ready to inline in HTML."""
    buffer = io.StringIO()
    fig.savefig(
        buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None}
    )
    text = buffer.getvalue()
    return INDENT.sub("\n", text[text.find("<svg") :])  # a third smaller, the same drawing


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


def _forest_row(axis: Any, row: int, series: Series, colour: str) -> None:
    if series.rate is None:
        axis.text(0.02, row, "no reference", fontsize=7, va="center")
        return
    if series.low is not None and series.high is not None:
        axis.hlines(row, series.low, series.high, color=colour, linewidth=2)
    axis.plot([series.rate], [row], "o", color=colour)


@styled
def scenario_figure(
    series: Sequence[Series], floor: float | None, title: str, similarity: bool
) -> str:
    """Every arm of one scenario in one figure, the baseline first: each flip rate with its 95%
    interval and, when ``similarity`` means something (a text-level comparator, or a similarity
    measure configured), the per-seed similarity strip with the null-band floor.
    """
    n = len(series)
    height = 0.32 * n + 0.9
    fig = _figure(7.5, height)
    axes = fig.subplots(1, 2, width_ratios=[3, 2]) if similarity else [fig.subplots()]
    forest = axes[-1]
    for row, item in enumerate(series):
        colour = BASE_COLOUR if row == 0 else ARM_COLOUR
        _forest_row(forest, row, item, colour)
        if similarity:
            ys = [row + j for j in _jitter(len(item.similarities))]
            axes[0].scatter(list(item.similarities), ys, s=10, color=colour, alpha=0.7)
    if similarity and floor is not None and math.isfinite(floor):
        axes[0].axvline(floor, color=FLOOR_COLOUR, linestyle="--", linewidth=1)
        axes[0].set_xlabel(f"similarity per seed (null-band floor {floor:.3f})", fontsize=8)
    elif similarity:
        axes[0].set_xlabel("similarity to the reference, per seed", fontsize=8)
    labels = [_label(s.label) for s in series]
    for axis in axes:
        axis.set_yticks(range(n), labels=labels, fontsize=7)
        axis.set_ylim(n - 0.5, -0.5)
        axis.set_xlim(-0.02, 1.02)
        axis.tick_params(axis="x", labelsize=7)
    forest.set_xlabel(f"flip rate, 95% interval ({_label(title)})", fontsize=8)
    forest.set_xticks([0.0, 0.25, 0.5, 0.75, 1.0])
    return to_svg(fig)


@dataclass(frozen=True)
class Effect:
    """One challenger's pooled effect for the forest plot."""

    label: str
    diff: float
    low: float
    high: float
    significant: bool


class _Interval(Protocol):
    diff: float
    low: float
    high: float


class _Tested(Protocol):
    @property
    def arm(self) -> str: ...
    @property
    def effect(self) -> _Interval | None: ...


def _reading(r: _Tested) -> object:
    """An arm-level verdict's statistical verdict, or a pooled block's secondary reading."""
    return getattr(r, "statistical_verdict", None) or getattr(r, "secondary_reading", None)


def effects_of(records: Sequence[_Tested]) -> list[Effect]:
    """The forest plot's rows from records with an ``effect`` (arm-level or pooled)."""
    return [
        Effect(
            r.arm,
            r.effect.diff,
            r.effect.low,
            r.effect.high,
            _reading(r) == "significant",
        )
        for r in records
        if r.effect is not None
    ]


POOLED_AXIS = (
    "pooled flip-rate difference, arm minus baseline (95% CI clustered by scenario; "
    "filled: significant)"
)
"""The forest plot's axis for the pooled tests (``summary.pooled``)."""


def _span(effects: Sequence[Effect]) -> tuple[float, float]:
    """The x range that shows every interval and zero, with a margin (at least 0.05 wide): an
    eval set's intervals are narrow, and on the full [-1, 1] they would be dots.
    """
    low = min([0.0, *(e.low for e in effects)])
    high = max([0.0, *(e.high for e in effects)])
    pad = max(0.1 * (high - low), 0.025)
    return max(low - pad, -1.02), min(high + pad, 1.02)


@styled
def forest_figure(
    effects: Sequence[Effect], axis_label: str = POOLED_AXIS, zoom: bool = False
) -> str:
    """Each challenger's flip-rate difference (arm minus baseline) with its interval, zero
    marked; significant ones filled. ``axis_label`` says which difference and interval;
    ``zoom`` fits the axis to the intervals (else it spans -1 to 1).
    """
    n = len(effects)
    fig = _figure(7.5, 0.34 * n + 0.9)
    axis = fig.subplots()
    axis.axvline(0.0, color="#888", linewidth=1)
    for row, e in enumerate(effects):
        colour = FLOOR_COLOUR if e.significant and e.diff > 0 else BASE_COLOUR
        axis.hlines(row, e.low, e.high, color=colour, linewidth=2)
        face = colour if e.significant else "white"
        axis.plot([e.diff], [row], "o", color=colour, markerfacecolor=face)
    axis.set_yticks(range(n), labels=[_label(e.label) for e in effects], fontsize=8)
    axis.set_ylim(n - 0.5, -0.5)
    axis.set_xlim(*(_span(effects) if zoom else (-1.02, 1.02)))
    axis.tick_params(axis="x", labelsize=7)
    axis.set_xlabel(axis_label, fontsize=8)
    return to_svg(fig)


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
