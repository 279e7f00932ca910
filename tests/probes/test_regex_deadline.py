"""A regex comparator judges every output under a time bound (issue 27 item 2).

Python's ``re`` cannot be interrupted: a nested quantifier on a hostile output spun the driver
forever. Each case runs in a child interpreter with a hard timeout, so a regression fails
instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

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
