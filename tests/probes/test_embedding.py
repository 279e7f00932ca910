"""Embedding similarity (issue 11): cosine of a user embedder's vectors, clipped to [0, 1]."""

from __future__ import annotations

import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from counterfact import ScoringError, compare_arms
from counterfact.exceptions import ConfigError
from counterfact.probes.similarity import EmbeddingSimilarity

from ..conftest import scripted

VOCAB = ("canberra", "sydney", "capital", "largest", "city")


def bag_of_words(texts: list[str]) -> list[list[float]]:
    """A small deterministic embedder: word counts over a fixed vocabulary, plus a constant."""
    out = []
    for text in texts:
        words = text.lower().replace(".", " ").replace(",", " ").split()
        out.append([float(words.count(v)) for v in VOCAB] + [0.1])
    return out


def test_cosine_by_hand() -> None:
    sim = EmbeddingSimilarity(bag_of_words)
    # identical bags: cosine 1; "sydney largest city" vs "canberra capital": only the constant
    # component is shared: 0.01 / (sqrt(2.01) * sqrt(3.01)), computed by hand.
    got = sim.score("Canberra capital", ["capital Canberra", "Sydney largest city"])
    assert got[0] == pytest.approx(1.0)
    assert got[1] == pytest.approx(0.01 / (math.sqrt(2.01) * math.sqrt(3.01)))


def test_reference_is_embedded_once() -> None:
    calls: list[list[str]] = []

    def counting(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return bag_of_words(texts)

    sim = EmbeddingSimilarity(counting)
    sim.score("Canberra", ["Canberra", "Sydney"])
    sim.score("Canberra", ["capital"])
    assert calls == [["Canberra"], ["Canberra", "Sydney"], ["capital"]]


def test_negative_cosine_is_clipped_to_zero() -> None:
    sim = EmbeddingSimilarity(
        lambda texts: [[1.0, 0.0] if t == "a" else [-1.0, 0.0] for t in texts]
    )
    assert sim.score("a", ["b", "a"]) == [0.0, 1.0]


@pytest.mark.parametrize(
    ("embedder", "match"),
    [
        (lambda texts: [[1.0]], "one vector per text"),
        (lambda texts: [[0.0, 0.0] for _ in texts], "zero or non-finite"),
        (lambda texts: 1 / 0, "raised ZeroDivisionError"),
    ],
)
def test_bad_embedders_are_scoring_errors(embedder: object, match: str) -> None:
    sim = EmbeddingSimilarity(embedder)  # type: ignore[arg-type]
    with pytest.raises(ScoringError, match=match):
        sim.score("a", ["b", "c"])


def test_sweep_with_an_embedder_from_a_file(tmp_path: Path) -> None:
    (tmp_path / "emb.py").write_text(
        "from tests.probes.test_embedding import bag_of_words\n", encoding="utf-8"
    )
    result = compare_arms(
        [{"id": "base"}, {"id": "stale", "facets": {"index": "stale"}}],
        scripted({"base": "The capital is Canberra.", "stale": "Sydney, the largest city."}),
        samples=3,
        reference="Canberra is the capital.",
        similarity={"kind": "embedding", "embedder": f"{tmp_path / 'emb.py'}:bag_of_words"},
        comparator={"kind": "similarity", "threshold": 0.5},
        executor="local",
    )
    assert result.row("base").similarity.mean == pytest.approx(1.0)  # type: ignore[union-attr]
    assert result.row("stale").verdict == "confirmed"
    assert "mean sim (embedding)" in result.table()


def test_model_without_the_extra_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    with pytest.raises(ConfigError, match=r"counterfact\[embeddings\]"):
        compare_arms(
            [{"id": "base"}, {"id": "b", "facets": {"x": 1}}],
            scripted({"base": "a", "b": "b"}),
            similarity={"kind": "embedding", "model": "all-MiniLM-L6-v2"},
            executor="local",
        )


def test_model_adapter_loads_by_name_and_reports_a_missing_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stand-in for the sentence-transformers package: the adapter's own code is what runs.
    fake = types.ModuleType("sentence_transformers")

    class SentenceTransformer:
        def __init__(self, name: str) -> None:
            if name != "tiny":
                raise OSError(f"{name} is not a valid model identifier")

        def encode(self, texts: list[str], **_: object) -> np.ndarray:
            return np.asarray(bag_of_words(texts))

    fake.SentenceTransformer = SentenceTransformer  # type: ignore[attr-defined]
    fake.__spec__ = types.SimpleNamespace(name="sentence_transformers")  # type: ignore[assignment]
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    arms = [{"id": "base"}, {"id": "b", "facets": {"x": 1}}]
    runner = scripted({"base": "Canberra", "b": "Sydney"})
    result = compare_arms(
        arms,
        runner,
        reference="Canberra",
        similarity={"kind": "embedding", "model": "tiny"},
        executor="local",
    )
    assert result.row("b").similarity.mean < 0.5  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match=r"could not load sentence-transformers model 'nope'"):
        compare_arms(
            arms, runner, similarity={"kind": "embedding", "model": "nope"}, executor="local"
        )
