"""Searching an answer out of a text with a regular expression, under a deadline per search
and a budget per sweep (for :class:`~counterfact.probes.comparators.RegexComparator`).

Python's ``re`` cannot be interrupted; the ``regex`` package's ``timeout=`` can, so a pattern
that backtracks catastrophically is a failed search, never a hang.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import regex

REGEX_MATCH_S = 1.0
"""How long a regex comparator's pattern may take to search one text (an output or the
reference); Python's ``re`` cannot be interrupted, the ``regex`` package's ``timeout=`` can.
"""


REGEX_BUDGET_S = 5.0
"""Seconds of slow regex searching (each search over :data:`REGEX_SLOW_S`) one sweep (one
``run``, resume or re-judge) may spend in full before every search's deadline tightens to
:data:`REGEX_SPENT_MATCH_S` (issue 45 item 7: 200 questions with backtracking patterns took 24
minutes to judge, one full deadline after another)."""

REGEX_SLOW_S = 0.005
"""A search quicker than this is not charged to the budget: an answer pattern searches a
normal output in microseconds, so a 10,000-question sweep never spends it."""

REGEX_SPENT_MATCH_S = 0.02
"""Each search's deadline once the budget is spent: ample for a pattern that does not
backtrack (microseconds, even on a loaded machine), 50 times less than :data:`REGEX_MATCH_S`."""

REGEX_TIMED_OUT_MATCH_S = 0.005
"""Once the budget is spent, the deadline of a pattern that already timed out in this sweep."""


@dataclass
class RegexBudget:
    """The slow regex searching a sweep may still do in full, shared by its regex checks.

    A search that takes :data:`REGEX_SLOW_S` or more is charged what it took (``clock``, given
    by the caller, tells it). While :attr:`seconds` are not spent each search has
    :data:`REGEX_MATCH_S`; after, :data:`REGEX_SPENT_MATCH_S` (:data:`REGEX_TIMED_OUT_MATCH_S` for
    a pattern that already timed out), so a file of backtracking patterns costs seconds, not
    minutes, and patterns that do not backtrack are judged as before. Held per process (a Ray
    worker judging outputs holds its own).
    """

    seconds: float
    clock: Callable[[], float]
    spent: float = 0.0
    timed_out: set[str] = field(default_factory=set)
    """Patterns that outlasted their deadline on some text in this sweep."""

    def deadline(self, pattern: str = "") -> float:
        """The next search's deadline in seconds (``pattern``: the one about to search)."""
        if self.spent >= self.seconds:
            return REGEX_TIMED_OUT_MATCH_S if pattern in self.timed_out else REGEX_SPENT_MATCH_S
        return max(REGEX_SPENT_MATCH_S, min(REGEX_MATCH_S, self.seconds - self.spent))

    def search(self, pattern: regex.Pattern[str], text: str, deadline: float) -> str | None:
        """:func:`extract` under ``deadline``, charged to the budget when slow.

        Raises:
            TimeoutError: the search outlasted ``deadline`` (the pattern is remembered).
        """
        started = self.clock()
        try:
            return extract(pattern, text, deadline)
        except TimeoutError:
            self.timed_out.add(pattern.pattern)
            raise
        finally:
            took = self.clock() - started
            if took >= REGEX_SLOW_S:
                self.spent += took


def compile_pattern(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled as Python's ``re`` would read it (``regex``'s version 0 mode).

    Raises:
        regex.error: the pattern is not a valid regular expression.
    """
    return regex.compile(pattern, flags=regex.VERSION0)


def extract(pattern: regex.Pattern[str], text: str, timeout_s: float = REGEX_MATCH_S) -> str | None:
    """The first match of ``pattern`` in ``text`` — its first group that took part, when the
    pattern has groups — or None when nothing matched or what matched is empty.

    Raises:
        TimeoutError: the search took longer than ``timeout_s``.
    """
    match = pattern.search(text, timeout=timeout_s)
    if match is None:
        return None
    found = next((g for g in match.groups() if g is not None), None)
    answer = found if pattern.groups else match.group(0)
    return answer if answer and answer.strip() else None
