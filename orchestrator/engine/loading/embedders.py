"""Ready embedders for ``similarity: {kind: embedding}``: sentence-transformers models.

The model is loaded when the sweep is resolved — before any run is spent — so a missing extra,
a misspelt model name or an unreadable local path is a configuration error, not a failure
halfway through scoring. sentence-transformers is an optional extra:
``pip install 'counterfact[embeddings]'``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from counterfact.exceptions import ConfigError

EXTRA = "pip install 'counterfact[embeddings]'"


def sentence_transformer(model: str, field: str) -> Callable[[list[str]], Any]:
    """An embedder backed by the sentence-transformers model ``model`` (a name or a path).

    Raises:
        ConfigError: the extra is not installed, or the model cannot be loaded.
    """
    if importlib.util.find_spec("sentence_transformers") is None:
        msg = (
            f"similarity model {model!r} needs sentence-transformers, which is not installed; "
            f"{EXTRA} (or give 'embedder: module:callable' instead)"
        )
        raise ConfigError(msg, field=field)
    from sentence_transformers import SentenceTransformer

    try:
        encoder = SentenceTransformer(model)
    except Exception as exc:
        msg = (
            f"could not load sentence-transformers model {model!r}: {type(exc).__name__}: "
            f"{str(exc)[:300]}; check the model name, or give a local path to a saved model"
        )
        raise ConfigError(msg, field=field) from exc

    def embed(texts: list[str]) -> Any:
        return encoder.encode(texts, batch_size=64, convert_to_numpy=True)

    embed.__qualname__ = f"sentence_transformer({model!r})"
    return embed
