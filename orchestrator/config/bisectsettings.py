"""The ``bisect:`` section resolved once (:class:`BisectSettings`): what the culprit search
reads, its suspects expanded and checked, instead of the raw config section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from counterfact.orchestrator.config.schema import BisectConfig


@dataclass(frozen=True)
class BisectSettings:
    """How a culprit search runs (rule 10): which suspects, in which order, within which
    budget, decided how. Each field is the ``bisect:`` key of the same name (see
    :class:`~counterfact.orchestrator.config.schema.BisectConfig`), resolved.
    """

    suspects: tuple[str, ...]
    """The ablation ids searched, likeliest first (``suspects: all`` expanded, ``keep`` and
    the question left out)."""
    rank: Literal["given", "loo", "surrogate"]
    rank_probes: int
    max_probes: int
    max_culprits: int
    speculative: bool
    stop_early: bool
    decide: Literal["auto", "majority", "test"]

    @classmethod
    def of(cls, section: BisectConfig, suspects: Sequence[str]) -> BisectSettings:
        """The settings of ``section`` searching ``suspects`` (its own list, or the parts
        ``suspects: all`` expanded to).
        """
        return cls(
            suspects=tuple(suspects),
            rank=section.rank,
            rank_probes=section.rank_probes,
            max_probes=section.max_probes,
            max_culprits=section.max_culprits,
            speculative=section.speculative,
            stop_early=section.stop_early,
            decide=section.decide,
        )
