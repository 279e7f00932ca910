"""A regex comparator judges every output under a time bound (issue 27 item 2).

Python's ``re`` cannot be interrupted: a nested quantifier on a hostile output spun the driver
forever. Each case runs in a child interpreter with a hard timeout, so a regression fails
instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

HARD_TIMEOUT_S = 60


def judge(pattern: str, output: str) -> str:
    """What the regex comparator says about ``output`` (reference ``aaa``), run in a child."""
    code = textwrap.dedent(
        f"""
        from counterfact import ScoringError
        from counterfact.probes.comparators import COMPARATORS
        cmp = COMPARATORS["regex"].build({{"pattern": {pattern!r}}})
        try:
            print("flipped" if cmp.flipped("aaa", {output!r}, 1.0) else "same")
        except ScoringError as exc:
            print("error:", exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=HARD_TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_nested_quantifier_of_the_issue_is_judged_at_once() -> None:
    # ^(a+)+$ on 36 a's and '!' backtracked 2^36 times under re
    assert judge(r"^(a+)+$", "a" * 36 + "!") == "flipped"


def test_an_output_that_outlasts_the_deadline_is_a_failed_comparison_with_the_reason() -> None:
    said = judge(r"^(a|a)+$", "a" * 40 + "!")
    assert said.startswith("error: regex comparator: the pattern /^(a|a)+$/ took more than")
    assert "41-character output" in said and "comparator.pattern" in said
    assert "\n" not in said


def test_python_regex_semantics_are_kept() -> None:
    # unicode \w and backreferences, as Python's re has them (RE2 has neither)
    assert judge(r"(\w+)", "aaa") == "same"
    assert judge(r"((\w)\2+)", "zaaa") == "same"


def test_the_budget_charges_slow_searches_only_and_then_tightens_every_deadline() -> None:
    """Issue 45 item 7, at eval-set scale: 10,000 quick searches must not spend the sweep's
    regex budget (a hostile file's backtracking must), and once it is spent a pattern that does
    not backtrack is still judged, under the tightened deadline."""
    from counterfact.exceptions import ComparisonTimeout
    from counterfact.probes.comparators import RegexComparator
    from counterfact.probes.regex_search import (
        REGEX_MATCH_S,
        REGEX_SPENT_MATCH_S,
        REGEX_TIMED_OUT_MATCH_S,
        RegexBudget,
        compile_pattern,
    )

    ticks = iter(range(10**9))  # each reading 1 ms later: every search "takes" 1 ms, under 5 ms
    quick = RegexBudget(0.5, lambda: next(ticks) / 1000)
    fair = RegexComparator(compile_pattern(r"Answer:\s*(\w+)"), budget=quick)
    for i in range(10_000):
        assert fair.flipped("Answer: Paris", f"Answer: {'Paris' if i % 2 else 'Lyon'}", 1.0) is (
            i % 2 == 0
        )
    assert quick.spent == 0.0  # charging every search would have spent 20 s of it
    budget = RegexBudget(0.5, time.monotonic)
    assert budget.deadline() == min(REGEX_MATCH_S, 0.5)
    hostile = RegexComparator(compile_pattern(r"^(a|a)+$"), budget=budget)
    with pytest.raises(ComparisonTimeout, match=r"cut short at 0\.5 s"):  # what was left
        hostile.flipped("aaa", "a" * 40 + "!", 1.0)
    assert budget.spent >= 0.5 and budget.deadline() == REGEX_SPENT_MATCH_S
    assert budget.deadline(r"^(a|a)+$") == REGEX_TIMED_OUT_MATCH_S  # it timed out already
    with pytest.raises(ComparisonTimeout, match=r"cut short at 0\.005 s.*slow regex searching"):
        hostile.flipped("aaa", "a" * 40 + "!", 1.0)
    fair = RegexComparator(compile_pattern(r"Answer:\s*(\w+)"), budget=budget)
    assert fair.flipped("Answer: Paris", "Answer: Paris", 1.0) is False  # still judged
