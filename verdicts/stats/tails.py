"""A p-value from the two tails of a null distribution symmetric about 0, in the direction a
test looks: ``greater`` the upper tail, ``less`` the lower, ``two-sided`` twice the smaller
(exact for a symmetric null: the two tails are mirror images).
"""

from __future__ import annotations

from counterfact.records.vocabulary import Alternative


def directed_p(upper: float, lower: float, alternative: Alternative) -> float:
    """``P(T >= t)``, ``P(T <= t)`` or twice the smaller of the two (capped at 1)."""
    if alternative == "greater":
        return upper
    if alternative == "less":
        return lower
    return min(1.0, 2 * min(upper, lower))
