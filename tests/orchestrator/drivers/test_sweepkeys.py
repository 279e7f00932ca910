"""``compare_arms``'s typed extra keywords (``**config: Unpack[SweepKeys]``) are generated from
the sweep file's schema: the module is current, and every key it names is one the schema takes
and ``compare_arms`` honours.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import typing
from pathlib import Path

from counterfact.orchestrator.config.schema import SweepConfig
from counterfact.orchestrator.drivers import sweepkeys
from counterfact.orchestrator.drivers.api import ELSEWHERE, compare_arms

ROOT = Path(__file__).resolve().parents[3]


def _generator() -> typing.Any:
    spec = importlib.util.spec_from_file_location(
        "gen_api_kwargs", ROOT / "scripts/gen_api_kwargs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_generated_keys_are_current() -> None:
    gen = _generator()
    text = (ROOT / "orchestrator/drivers/sweepkeys.py").read_text(encoding="utf-8")
    assert text == gen.module_text(), "stale: run python scripts/gen_api_kwargs.py"


def test_every_schema_key_is_a_parameter_a_typed_keyword_or_refused() -> None:
    named = set(inspect.signature(compare_arms).parameters) - {"config"}
    typed = set(sweepkeys.SweepKeys.__annotations__)
    assert not named & typed and not typed & set(ELSEWHERE)
    assert set(SweepConfig.model_fields) <= named | typed | set(ELSEWHERE)


def test_a_typed_keyword_reaches_the_sweep() -> None:
    result = compare_arms(
        [{"id": "base"}],
        lambda ctx: "yes" if "t" not in ctx.arm.ablations else "no",
        reference="yes",
        comparator="exact",
        samples=2,
        executor="local",
        ablate_each=["t"],
    )
    assert [row.arm for row in result.rows] == ["base", "without:t"]
