"""A sweep file is read without YAML 1.1's silent readings (issue 27), as scenario files are:
``on`` in a facet was the boolean True, ``samples: 010`` was 8 and ``0x10`` 16, with no word
said. Each is now one line with its position and the fix; quoted text and plain values load.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from counterfact import ConfigError, load_sweep

from ...conftest import TESTS, write_config

HEAD = f"name: y\nrunner: {TESTS / 'runners.py'}:echo_arm\n"
ARMS = "arms:\n  - id: base\n  - id: alt\n    facets: {{model: large{facet}}}\n{arm}"


def sweep_text(facet: str = "", arm: str = "", extra: str = "") -> str:
    return HEAD + ARMS.format(facet=facet, arm=arm) + extra


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (sweep_text(facet=", verbose: yes"), r"'yes' would be read as True by YAML 1\.1"),
        (sweep_text(arm="    placebo: no\n"), r"'no' would be read as False by YAML 1\.1"),
        (sweep_text(extra="samples: 010\n"), r"010 would be read as the number 8 .* write 8"),
        (sweep_text(extra="samples: 0x10\n"), r"0x10 would be read as the number 16"),
        (sweep_text(extra="samples: 1_000\n"), r"1_000 would be read as the number 1000"),
        (
            sweep_text(extra="scenarios: [{id: q, inputs: {flag: on, n: 5}}]\n"),
            r"'on' would be read as True .* quote it \('on'\)",
        ),
    ],
    ids=["facet-yes", "placebo-no", "octal", "hex", "underscore", "input-on"],
)
def test_a_yaml_1_1_reading_is_refused_with_its_position(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(ConfigError, match=expected) as info:
        load_sweep(write_config(tmp_path, text))
    message = str(info.value)
    assert message.startswith("sweep.yaml: YAML value refused at line ") and "\n" not in message


def test_quoted_words_and_plain_values_keep_their_meaning(tmp_path: Path) -> None:
    text = sweep_text(
        facet=", verbose: 'yes', port: '010', strict: true",
        extra="samples: 10\nscenarios: [{id: q, inputs: {flag: 'on', n: -5, 'off': false}}]\n",
    )
    sweep = load_sweep(write_config(tmp_path, text))
    assert sweep.config.samples == 10
    alt = next(a for a in sweep.arms if a.id == "alt")
    assert alt.facets == {"model": "large", "verbose": "yes", "port": "010", "strict": True}
    assert sweep.scenarios[0].inputs == {"flag": "on", "n": -5, "off": False}
