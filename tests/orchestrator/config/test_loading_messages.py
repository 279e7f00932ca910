"""The words of a few loading errors (issue 27 item 10): a number YAML reads as text, or one out
of range, says so (not "write a number without quotes" for a number written without quotes); a
control character is one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact import ConfigError, load_sweep

from ...conftest import TESTS, write_config

GOOD = f"""
name: good
runner: {TESTS / "runners.py"}:echo_arm
arms:
  - id: base
  - id: alt
    facets: {{answer: nope}}
"""


def error_of(tmp_path: Path, extra: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_sweep(write_config(tmp_path, GOOD + extra))
    text = str(info.value)
    assert "\n" not in text
    return text


def test_an_infinite_sample_count_is_out_of_range(tmp_path: Path) -> None:
    text = error_of(tmp_path, "samples: 1e400\n")
    assert text.startswith("samples: 1e400 is out of range")
    assert "without quotes" not in text


def test_a_huge_float_sample_count_is_out_of_range(tmp_path: Path) -> None:
    assert error_of(tmp_path, "samples: 1.0e+400\n").startswith("samples: inf is out of range")


def test_an_exponent_without_a_dot_is_read_as_text_and_the_message_says_how_to_write_it(
    tmp_path: Path,
) -> None:
    text = error_of(tmp_path, "statistics: {alpha: 1e-300}\n")
    assert text.startswith("statistics.alpha: '1e-300' is read as text")
    assert "write 1.0e-300" in text and "without quotes" not in text


def test_a_whole_number_with_an_exponent_says_to_write_it_out(tmp_path: Path) -> None:
    text = error_of(tmp_path, "samples: 1e3\n")
    assert "write 1000" in text


def test_a_control_character_is_one_line_with_its_position(tmp_path: Path) -> None:
    text = error_of(tmp_path, 'x: "a\x01b"\n')
    assert "#x0001" in text and "line 8" in text
