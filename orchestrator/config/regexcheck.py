"""A regex comparator's pattern tried on each reference with a time bound.

A pattern with overlapping quantifiers (``(a|a)+$``) can backtrack for hours on a text it does not
match. Patterns run on the ``regex`` package, whose searches take a deadline; a pattern too slow
on a reference is refused before any run (an output too slow is a failed comparison, see
:class:`~counterfact.probes.comparators.RegexComparator`).
"""

from __future__ import annotations

import regex

from counterfact.probes.regex_search import extract

REGEX_CHECK_S = 2.0
"""How long one pattern may take to search one reference at resolve time."""


def extracts_in_time(
    pattern: regex.Pattern[str], text: str, timeout_s: float = REGEX_CHECK_S
) -> bool | None:
    """True when ``pattern`` extracts an answer from ``text``, False when it does not, None when
    it did not finish within ``timeout_s``.
    """
    try:
        return extract(pattern, text, timeout_s) is not None
    except TimeoutError:
        return None
