"""A question file is data: what a check read from data may say.

Only the sweep file (code the user wrote) and the Python caller may name code: the ``runner``,
the ``comparator`` and ``similarity`` targets, and the ``checks:`` table. A check read from
data — a scenario file in any format, an imported log, a recorded call — may use the built-in
kinds with data parameters, or pick a declared check by name (``{"kind": "custom", "target":
"same_city"}`` or just ``"same_city"``). Anything else that names a callable is refused here,
while the file is read, before anything is imported or called.

:func:`data_check` vets one raw ``expect`` value from a data file. The resolver's check builder
holds the second line (:func:`custom_target`): even a check that got past the reader as data is
looked up in the table and never imported from its own text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from counterfact.exceptions import CodeInDataError, ConfigError
from counterfact.orchestrator.config.model import Target
from counterfact.probes.comparators import COMPARATORS


def _declared(names: Mapping[str, object]) -> str:
    return ", ".join(sorted(names)) if names else "none"


def _refusal(where: str, named: str, names: Mapping[str, object]) -> str:
    """One line: what the data named (``where``: the file, row and key), why it is refused, the
    fix.
    """
    return (
        f"{where}{named!r} names code, and a question file is data: it may not name a "
        "callable. Declare the check in the sweep file (checks: {my_check: "
        'module:callable}) and write {"kind": "custom", "target": "my_check"} here; '
        f"declared checks: {_declared(names)}"
    )


def data_check(raw: Any, names: Mapping[str, object], *, where: str, field: str) -> Any:
    """``raw`` (one question's ``expect`` as a data file holds it) with a declared check's bare
    name expanded to ``{"kind": "custom", "target": NAME}``; everything else as it was, for the
    schema to validate. ``where`` leads the message (``questions.jsonl: line 3: ``), ``field``
    is the config field the error names.

    Raises:
        CodeInDataError: ``raw`` names a callable (``module:attr``, ``file.py:attr``) or a
            ``target`` that is not a name in ``names`` (the sweep file's ``checks:``).
        ConfigError: a bare name that is neither a comparator kind nor a declared check.
    """
    if isinstance(raw, str):
        if raw in names:
            return {"kind": "custom", "target": raw}
        if ":" in raw:
            raise CodeInDataError(_refusal(f"{where}expect: ", raw, names), field=field)
        if raw not in COMPARATORS:
            msg = (
                f"{where}expect: {raw!r} is neither a comparator kind "
                f"({', '.join(sorted(COMPARATORS))}) nor a check the sweep file declares "
                f"(checks: {_declared(names)})"
            )
            raise ConfigError(msg, field=field)
        return raw
    if isinstance(raw, dict) and "target" in raw:
        target = raw["target"]
        if not isinstance(target, str) or target not in names:
            msg = _refusal(f"{where}expect.target: ", str(target), names)
            raise CodeInDataError(msg, field=field)
    return raw


def custom_target(
    target: Target, checks: Mapping[str, Target], *, trusted: bool, field: str
) -> Target:
    """What a custom check's ``target`` means: a declared check's own target when it is one's
    name; else the target itself, when it comes from the sweep file or the caller (``trusted``).

    Raises:
        CodeInDataError: an untrusted (data-borne) target that names no declared check.
    """
    if isinstance(target, str) and target in checks:
        return checks[target]
    if trusted:
        return target
    raise CodeInDataError(_refusal("", str(target), checks), field=field)
