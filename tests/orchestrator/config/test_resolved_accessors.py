"""What a resolved sweep says about its budget, seeds, design and executor (read once, here)."""

from __future__ import annotations

from pathlib import Path

from counterfact import load_sweep

from ...conftest import TESTS, write_config

SWEEP = f"""
name: acc
runner: {TESTS / "runners.py"}:echo_arm
samples: 4
budget: {{usd: 5}}
cache_dir: cache
executor: {{kind: ray, concurrency: 3, num_cpus: 2, rate_limit: {{requests_per_minute: 60}}}}
arms:
  - id: base
  - id: alt
    facets: {{answer: nope}}
"""


def test_a_fixed_sample_sweep(tmp_path: Path) -> None:
    sweep = load_sweep(write_config(tmp_path, SWEEP))
    assert (sweep.name, sweep.samples, sweep.max_seeds) == ("acc", 4, 4)
    assert sweep.budget_limits == {"usd": 5.0} and isinstance(sweep.budget_limits["usd"], float)
    assert sweep.cache_dir == Path("cache") and sweep.runner_version is None
    assert sweep.design is None and sweep.waves is None
    options = sweep.executor_options
    assert (options.pool.concurrency, options.pool.per_minute, options.num_cpus) == (3, 60.0, 2)


def test_a_sequential_sweep_caps_its_seeds_and_records_its_design(tmp_path: Path) -> None:
    text = SWEEP + "sequential: {max_samples: 16}\nstatistics: {alternative: two-sided}\n"
    sweep = load_sweep(write_config(tmp_path, text), overrides=["budget=~", "cache_dir=~"])
    assert (sweep.samples, sweep.max_seeds) == (4, 16)
    assert sweep.budget_limits == {} and sweep.cache_dir is None
    assert sweep.waves is not None
    # the fingerprint's design: what the decisions depend on; the direction only when not the
    # default, so a directory written before it existed still resumes
    assert sweep.design is not None and sweep.design.as_data() == {
        "samples": 4,
        "wave": sweep.waves.wave,
        "alpha": 0.05,
        "adjust": "holm",
        "family": "sweep",
        "pairing": "seed",
        "arms": ["alt", "base"],
        "alternative": "two-sided",
    }
