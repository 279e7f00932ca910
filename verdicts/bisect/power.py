"""Whether a ``decide: test`` culprit search can reach alpha at all, known before it spends.

Under rule 20 a probe flips when its exact one-sided McNemar test against the baseline probe is
significant at ``alpha``, and each set found is claimed only once it holds on fresh seeds at
``alpha / max_culprits``. With ``n`` paired seeds the smallest p any outcome gives is ``2**-n``
(every discordant pair one way), so at few samples no probe can flip (the search would end
"not reproducible") or no set can hold (it would end "no set held") whatever the program does.
That is an underpowered search, and it is said as one, with the samples that can reach alpha
(:func:`~counterfact.verdicts.stats.significance.pairs_needed`, as a sweep's underpowered test
says).
"""

from __future__ import annotations

from dataclasses import dataclass

from counterfact.verdicts.stats.significance import at_most, floor_of, pairs_needed


@dataclass(frozen=True)
class Underpowered:
    """A ``decide: test`` search whose tests cannot reach their level at ``samples``."""

    samples: int
    """Seeded reruns per probe, as declared."""
    samples_needed: int
    """The fewest samples per probe at which both the search's test and the confirmation's
    could reach their level."""
    alpha: float
    """A search probe's level (``statistics.alpha``)."""
    max_culprits: int
    """The confirmation's level is ``alpha / max_culprits``."""
    seed0_excluded: bool
    """Seed 0 is left out of the search's pairs (it is the reference, rule 13)."""

    @property
    def search_pairs(self) -> int:
        """Paired seeds a search probe is tested on."""
        return self.samples - self.seed0_excluded

    @property
    def search_floor(self) -> float:
        """The smallest p a search probe's test can give."""
        return floor_of(self.search_pairs, "seed")

    @property
    def search_reaches(self) -> bool:
        """Some outcome of a search probe's test can reach ``alpha``."""
        return at_most(self.search_floor, self.alpha)

    @property
    def confirm_alpha(self) -> float:
        """The confirmation's level."""
        return self.alpha / self.max_culprits

    @property
    def confirm_floor(self) -> float:
        """The smallest p the confirmation (``samples`` fresh pairs) can give."""
        return floor_of(self.samples, "seed")

    @property
    def confirm_reaches(self) -> bool:
        """Some outcome of a set's confirmation can reach ``alpha / max_culprits``."""
        return at_most(self.confirm_floor, self.confirm_alpha)


def samples_needed(alpha: float, max_culprits: int, exclude_seed0: bool) -> int:
    """The fewest samples per probe at which a probe's test can reach ``alpha`` and a set's
    confirmation ``alpha / max_culprits`` (one-sided exact McNemar, paired by seed).
    """
    search = pairs_needed(alpha) + int(exclude_seed0)
    confirm = pairs_needed(alpha, factor=float(max_culprits))
    return max(search, confirm)


def underpowered(
    samples: int, alpha: float, max_culprits: int, exclude_seed0: bool
) -> Underpowered | None:
    """The shortfall of a ``decide: test`` search at ``samples``; None when it can reach alpha."""
    needed = samples_needed(alpha, max_culprits, exclude_seed0)
    if samples >= needed:
        return None
    return Underpowered(samples, needed, alpha, max_culprits, exclude_seed0)
