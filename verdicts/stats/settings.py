"""The judging settings, resolved from the config: light (no numpy, no scipy), so the resolved
sweep can carry them without loading the statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

from counterfact.defaults import ADJUST, ALPHA, ALTERNATIVE, FAMILY, PAIRING
from counterfact.records.summary import StatisticsRecord
from counterfact.records.vocabulary import Alternative

DEFAULT_STATISTICS = StatisticsRecord.model_validate(
    {"alpha": ALPHA, "adjust": ADJUST, "family": FAMILY, "pairing": PAIRING}
    | {"alternative": ALTERNATIVE}
)
"""The judging settings of a sweep that declares no ``statistics:`` section. The resolved
settings *are* their record (:class:`~counterfact.records.summary.StatisticsRecord`, validated
once from the config by :attr:`~counterfact.orchestrator.config.resolve.ResolvedSweep.statistics`
and written to ``summary.json`` as they are): no copy of their fields is kept by hand."""


def stop_threshold(alpha: float, adjust: str, family_size: int) -> float:
    """The e-value at which an arm is significant whatever the rest of its family shows:
    ``K / alpha`` for a family of ``K`` tests under Holm or BH (``1/E <= alpha/K`` is rejected by
    both), times the harmonic number ``H_K`` under BY, ``1/alpha`` without adjustment.
    """
    k = max(family_size, 1)
    if adjust == "none":
        return 1 / alpha
    if adjust == "by":
        return k * sum(1 / i for i in range(1, k + 1)) / alpha
    return k / alpha


def boundaries(samples: int, wave: int, max_samples: int) -> list[int]:
    """Seed counts at which an arm is looked at: ``samples``, then every ``wave`` more, and
    ``max_samples`` last.
    """
    out = list(range(samples, max_samples, wave))
    return [*out, max_samples] if not out or out[-1] != max_samples else out


def next_boundary(seeds: int, samples: int, wave: int, max_samples: int) -> int:
    """The first look after ``seeds`` seeds (``samples`` when none were looked at)."""
    if seeds < samples:
        return samples
    return min(samples + ((seeds - samples) // wave + 1) * wave, max_samples)


@dataclass(frozen=True)
class Waves:
    """The ``sequential:`` settings, resolved (the resolved sweep carries them)."""

    samples: int
    """The first wave (and the minimum)."""
    wave: int
    max_samples: int
    alpha: float
    threshold: float
    """The e-value at which an arm stops as significant."""
    alternative: Alternative = ALTERNATIVE
    """The direction the e-process tests (``statistics.alternative``)."""
    min_effect: float | None = None
    """``sequential.min_effect``: ruling out an effect this large stops an arm as futile."""

    def after(self, seeds: int) -> int:
        """The next look after ``seeds``."""
        return next_boundary(seeds, self.samples, self.wave, self.max_samples)
