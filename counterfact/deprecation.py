"""Declared moves: an old import path that keeps working until :data:`REMOVED_IN`, with a
:class:`DeprecationWarning` naming the new one (the model is Pyomo's
``relocated_module_attribute``, which inspect_ai's ``_util/deprecation.py`` carries).

Only paths a user could have imported get one: ``counterfact.probes.records``,
``counterfact.verdicts.records`` and ``counterfact.verdicts.seedsets``, named in the docs before
the record models moved to :mod:`counterfact.records`. Nothing in counterfact imports an old
path; ``tests/test_structure.py`` pins that.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

REMOVED_IN = "0.2.0"
"""The release that drops every relocated path."""


def relocated(old: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for the old module ``old``.

    Args:
        old: the old module's name (pass ``__name__``).
        names: each relocated name mapped to the module that now defines it.

    Returns:
        The ``__getattr__`` to assign in ``old``: it warns, then returns the name from its new
        module; any other name raises :class:`AttributeError` as a plain module would.
    """

    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            msg = f"module {old!r} has no attribute {name!r}"
            raise AttributeError(msg)
        warnings.warn(
            f"{old}.{name} moved to {new}.{name}; import it from there "
            f"({old} goes in counterfact {REMOVED_IN})",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(new), name)

    return __getattr__
