"""Read a sweep file (YAML or TOML), apply CLI overrides, validate and resolve it."""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError
from yaml.constructor import ConstructorError

from counterfact.defaults import MAX_CONFIG_DEPTH, MAX_CONFIG_NODES
from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config.errors import config_error
from counterfact.orchestrator.config.overrides import apply_overrides
from counterfact.orchestrator.config.yamlload import is_text, load_yaml

if TYPE_CHECKING:  # the schema and resolving load the engine's parts: a file that cannot be
    # read (missing, wrong extension, bad YAML) is refused before they are imported
    from counterfact.orchestrator.config.resolve import ResolvedBisect, ResolvedSweep
    from counterfact.orchestrator.config.schema import SweepConfig

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _yaml_where(exc: yaml.YAMLError, text: str) -> str:
    """Where and what, with PyYAML's context (``while parsing a flow sequence ... line 2``), on
    one line (a reader error's own text spans two).
    """
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return (
            f" at line {line}, column {column}: unacceptable character #x{char:04x}: "
            f'{exc.reason}; remove it, or write it as an escape in double quotes ("\\x{char:02x}")'
        )
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    started = ""
    if context:
        at = f" started at line {context_mark.line + 1}" if context_mark else ""
        started = f" ({context}{at})"
    return f"{where}: {problem}{started}"


def read_raw(path: Path) -> dict[str, Any]:
    """Parse the file into a mapping; YAML is loaded with a ``yaml.SafeLoader`` that also refuses
    duplicate keys and YAML 1.1's silent readings (``on`` as True, ``010`` as 8), as scenario
    files are (:mod:`~counterfact.orchestrator.config.yamlload`).

    Raises:
        ConfigError: missing file, unknown extension, syntax error, or a top level that is not a
            mapping.
    """
    if not path.is_file():
        msg = f"config file {str(path)!r} does not exist"
        raise ConfigError(msg)
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        msg = f"{path.name} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        raise ConfigError(msg) from exc
    try:
        if suffix in {".yaml", ".yml"}:
            data = load_yaml(text, plain=True)
        elif suffix == ".toml":
            data = tomllib.loads(text)
        else:
            msg = f"config file {path.name!r} must end in .yaml, .yml or .toml"
            raise ConfigError(msg)
    except yaml.YAMLError as exc:
        what = "value refused" if isinstance(exc, ConstructorError) else "syntax error"
        msg = f"{path.name}: YAML {what}{_yaml_where(exc, text)}"
        raise ConfigError(msg) from exc
    except tomllib.TOMLDecodeError as exc:
        msg = f"{path.name}: TOML syntax error: {exc}"
        raise ConfigError(msg) from exc
    except RecursionError as exc:
        msg = f"{path.name}: values nest too deeply to read (at most {MAX_CONFIG_DEPTH} levels)"
        raise ConfigError(msg) from exc
    except (ValueError, TypeError, OverflowError) as exc:  # a tag's constructor: !!int 0x1F x
        msg = f"{path.name}: a value cannot be read: {str(exc)[:200]}"
        raise ConfigError(msg) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        msg = f"{path.name}: the top level must be a mapping of keys, got {type(data).__name__}"
        raise ConfigError(msg)
    return data


def _where(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _check_tree(root: Any) -> None:
    """Refuse, by path, what no sweep needs and would make loading hang or crash: a value that
    contains itself (an alias inside its own anchor), more than :data:`MAX_CONFIG_NODES` values
    once aliases are expanded (an alias bomb), nesting deeper than :data:`MAX_CONFIG_DEPTH`, and
    text that is not valid Unicode (lone surrogates). Iterative: no recursion limit to hit.
    """
    stack: list[tuple[Any, str, tuple[int, ...]]] = [(root, "", ())]
    seen = 0
    while stack:
        node, path, inside = stack.pop()
        seen += 1
        if seen > MAX_CONFIG_NODES:
            msg = (
                f"the config holds more than {MAX_CONFIG_NODES:,} values once YAML aliases are "
                "expanded (an alias bomb?); write the values out, or split the sweep"
            )
            raise ConfigError(msg, field=path or "config")
        if isinstance(node, str) and not is_text(node):
            msg = "holds text that is not valid Unicode (a lone surrogate); use UTF-8 text"
            raise ConfigError(msg, field=path or "config")
        if isinstance(node, dict | list):
            _check_container(node, path, inside, stack)


def _check_container(
    node: dict[Any, Any] | list[Any],
    path: str,
    inside: tuple[int, ...],
    stack: list[tuple[Any, str, tuple[int, ...]]],
) -> None:
    if id(node) in inside:
        msg = (
            "this value contains itself (a YAML alias inside its own anchor, such as "
            "'facets: &f {x: *f}'); write the values out"
        )
        raise ConfigError(msg, field=path or "config")
    if len(inside) >= MAX_CONFIG_DEPTH:
        msg = f"values nest more than {MAX_CONFIG_DEPTH} levels deep; flatten them"
        raise ConfigError(msg, field=path or "config")
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        if isinstance(key, str) and not is_text(key):
            msg = "a key is not valid Unicode text (a lone surrogate); use UTF-8 text"
            raise ConfigError(msg, field=path or "config")
        stack.append((value, _where(path, key), (*inside, id(node))))


def validate_config(raw: dict[str, Any]) -> SweepConfig:
    """Validate raw data against the schema; every problem names its field path."""
    from counterfact.orchestrator.config.schema import SweepConfig

    _check_tree(raw)
    try:
        return SweepConfig.model_validate(raw)
    except ValidationError as exc:
        raise config_error(exc, SweepConfig) from exc


def _read(
    path: str | Path, overrides: Sequence[str], executor: str | None, address: str | None
) -> tuple[SweepConfig, Path, tuple[str, ...], tuple[str, ...]]:
    """The validated config, its absolute path, every override applied (flags included), and
    notes on what the flags changed.
    """
    source = Path(path).resolve()
    raw = apply_overrides(read_raw(source), list(overrides))
    applied, notes = _apply_flags(raw, executor, address)
    return validate_config(raw), source, (*overrides, *applied), notes


def _apply_flags(
    raw: dict[str, Any], executor: str | None, address: str | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``--executor`` / ``--address`` written into ``raw``: the flags as applied, and notes."""
    applied: list[str] = []
    notes: list[str] = []
    for key, value in (("kind", executor), ("address", address)):
        if value is None:
            continue
        section = raw.setdefault("executor", {})
        if isinstance(section, str):
            section = raw["executor"] = {"kind": section}
        if isinstance(section, dict):
            section[key] = value
            if key == "kind":
                notes += _drop_ray_only(section, value)
        applied.append(f"--{'executor' if key == 'kind' else key} {value}")
    return tuple(applied), tuple(notes)


def _drop_ray_only(section: dict[str, Any], kind: str) -> list[str]:
    """``--executor KIND`` on a file written for another kind: drop the options KIND does not
    honour (:data:`~counterfact.orchestrator.engine.executors.EXECUTORS`), saying so.
    """
    from counterfact.orchestrator.engine.executors.registry import EXECUTORS, unhonoured

    if kind not in EXECUTORS:
        return []  # the schema names the unknown kind
    dropped = sorted(unhonoured(kind, section))
    for key in dropped:
        section.pop(key)
    if not dropped:
        return []
    keys = ", ".join(f"executor.{k}" for k in dropped)
    takers = sorted(k for k, e in EXECUTORS.items() if all(d in e.takes for d in dropped))
    return [f"--executor {kind}: ignoring {keys} ({'/'.join(takers)} only)"]


def load_sweep(
    path: str | Path | Mapping[str, Any],
    *,
    overrides: Sequence[str] = (),
    executor: str | None = None,
    address: str | None = None,
    base_dir: str | Path | None = None,
) -> ResolvedSweep:
    """Load, override, validate and resolve a sweep file — or a mapping holding what a file
    would (relative targets then resolve against ``base_dir``, default the working directory).
    Runs nothing, writes nothing.
    """
    if isinstance(path, Mapping):
        raw = apply_overrides(copy.deepcopy(dict(path)), list(overrides))
        applied, notes = _apply_flags(raw, executor, address)
        folder = Path(base_dir).resolve() if base_dir is not None else Path.cwd()
        config = validate_config(raw)
        from counterfact.orchestrator.config.resolve import resolve_sweep

        sweep = resolve_sweep(config, base_dir=folder, overrides=(*overrides, *applied))
        return replace(sweep, notes=notes + sweep.notes)
    config, source, applied, notes = _read(path, overrides, executor, address)
    from counterfact.orchestrator.config.resolve import resolve_sweep  # the file was accepted

    sweep = resolve_sweep(config, base_dir=source.parent, source=source, overrides=applied)
    return replace(sweep, notes=notes + sweep.notes)


def load_bisect(
    path: str | Path,
    *,
    overrides: Sequence[str] = (),
    executor: str | None = None,
    address: str | None = None,
) -> ResolvedBisect:
    """Load, override, validate and resolve a sweep file for ``counterfact bisect``."""
    config, source, applied, notes = _read(path, overrides, executor, address)
    from counterfact.orchestrator.config.resolve import resolve_bisect  # the file was accepted

    plan = resolve_bisect(config, base_dir=source.parent, source=source, overrides=applied)
    return replace(plan, sweep=replace(plan.sweep, notes=notes + plan.sweep.notes))
