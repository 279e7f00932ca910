"""Write ``orchestrator/drivers/sweepkeys.py``: the typed keyword arguments of
:func:`counterfact.compare_arms` beyond its named parameters, generated from the sweep file's
schema (``SweepConfig``) so that the two cannot drift.

    python scripts/gen_api_kwargs.py          # rewrite the module
    python scripts/gen_api_kwargs.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import collections.abc
import inspect
import sys
import textwrap
import types
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from counterfact.orchestrator.config.schema import SweepConfig
from counterfact.orchestrator.drivers.api import ELSEWHERE, compare_arms

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "orchestrator" / "drivers" / "sweepkeys.py"
HEAD = '''"""The sweep-file keys :func:`~counterfact.orchestrator.drivers.api.compare_arms` takes as
keyword arguments beyond its named parameters, typed (``**config: Unpack[SweepKeys]``).

Generated from :class:`~counterfact.orchestrator.config.schema.SweepConfig` by
``scripts/gen_api_kwargs.py``; do not edit (a test fails when it is stale).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict


class SweepKeys(TypedDict, total=False):
    """Sweep-file keys passed to ``compare_arms`` by name, validated as in a file."""
'''


def render(tp: Any) -> str:
    """``tp`` as it reads in a type annotation (pydantic's ``Strict*`` as their plain types)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return render(args[0])
    if origin in (Union, types.UnionType):
        return " | ".join(render(a) for a in args)
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(render(a) for a in args)}]"
    if tp is type(None):
        return "None"
    if origin is collections.abc.Callable:  # a target (Python API): any callable
        return "Callable[..., Any]"
    if isinstance(tp, type) and tp.__module__ == "builtins":
        return tp.__name__
    msg = f"gen_api_kwargs: no rendering for {tp!r}; extend render()"
    raise SystemExit(msg)


def extra_keys() -> list[str]:
    """Schema fields that are neither named parameters of compare_arms nor refused by it."""
    named = set(inspect.signature(compare_arms).parameters)
    return [k for k in SweepConfig.model_fields if k not in named and k not in ELSEWHERE]


def module_text() -> str:
    """The whole generated module."""
    lines = [HEAD]
    for key in extra_keys():
        field = SweepConfig.model_fields[key]
        lines.append(f"    {key}: {render(field.annotation)}")
        if field.description:
            doc = textwrap.fill(field.description, 92, break_on_hyphens=False)
            body = textwrap.indent(doc, "    ").lstrip()
            lines.append(f'    """{body}"""' if "\n" not in body else f'    """{body}\n    """')
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = module_text()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run python scripts/gen_api_kwargs.py")
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
