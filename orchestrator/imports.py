"""Resolve ``package.module:attr`` and ``path/to/file.py:attr`` targets to callables.

A target names code that is imported and executed, as any ``import`` does. File targets are
resolved relative to the config file's folder and stored as absolute paths, so Ray workers on
the same machine (or on nodes sharing the file system) load the same file.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from counterfact.exceptions import RunnerImportError


@dataclass(frozen=True)
class TargetRef:
    """A picklable pointer to a callable: resolved again inside each worker."""

    kind: Literal["module", "file"]
    location: str
    """Module name, or absolute path of a ``.py`` file."""
    attr: str
    """Attribute path inside the module (dots allowed: ``Class.method``)."""

    def __str__(self) -> str:
        return f"{self.location}:{self.attr}"


def parse_target(spec: str, *, base_dir: Path, field: str) -> TargetRef:
    """Parse ``spec``; a file target is made absolute against ``base_dir``.

    Raises:
        RunnerImportError: the spec has no ``:attr`` part.
    """
    location, sep, attr = spec.rpartition(":")
    if not sep or not location.strip() or not attr.strip():
        msg = (
            f"{spec!r} is not a target; write 'package.module:callable' or "
            "'path/to/file.py:callable'"
        )
        raise RunnerImportError(msg, field=field)
    if location.endswith(".py") or "/" in location or "\\" in location:
        path = Path(location)
        if not path.is_absolute():
            path = base_dir / path
        return TargetRef("file", str(path.resolve()), attr)
    return TargetRef("module", location, attr)


_LOADED: dict[TargetRef, Callable[..., Any]] = {}


def _load_file(path: Path, field: str) -> Any:
    if not path.is_file():
        msg = f"runner file {str(path)!r} does not exist; paths are relative to the config file"
        raise RunnerImportError(msg, field=field)
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    name = f"counterfact_user_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        msg = f"cannot load {str(path)!r} as a Python module"
        raise RunnerImportError(msg, field=field)
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        msg = f"importing {str(path)!r} raised {type(exc).__name__}: {exc}"
        raise RunnerImportError(msg, field=field) from exc
    return module


def load_target(ref: TargetRef, *, field: str = "runner") -> Callable[..., Any]:
    """Import the target and return the callable (cached per process).

    Raises:
        RunnerImportError: the module or file cannot be imported, the attribute is missing, or
            it is not callable.
    """
    if ref in _LOADED:
        return _LOADED[ref]
    if ref.kind == "file":
        module = _load_file(Path(ref.location), field)
    else:
        try:
            module = importlib.import_module(ref.location)
        except Exception as exc:
            msg = (
                f"cannot import module {ref.location!r} ({type(exc).__name__}: {exc}); is it "
                "installed, or did you mean a file path like 'agents/my_agent.py:run'?"
            )
            raise RunnerImportError(msg, field=field) from exc
    obj: Any = module
    for part in ref.attr.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n in dir(module) if not n.startswith("_"))[:15]
            msg = f"{ref.location} has no attribute {ref.attr!r}; it defines: {', '.join(public)}"
            raise RunnerImportError(msg, field=field)
        obj = getattr(obj, part)
    if not callable(obj):
        msg = f"{ref} is a {type(obj).__name__}, not a callable"
        raise RunnerImportError(msg, field=field)
    _LOADED[ref] = obj
    return obj  # type: ignore[no-any-return]


RunnerRef = TargetRef | Callable[..., Any]
"""What executors ship to workers: a target to import there, or a (picklable) callable."""


def resolve_runner(ref: RunnerRef) -> Callable[..., Any]:
    """The callable behind a runner reference."""
    return load_target(ref) if isinstance(ref, TargetRef) else ref


def describe_target(target: object) -> str:
    """A readable name for a target (string as given, or ``module:qualname`` for a callable)."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", "?")
    name = getattr(target, "__qualname__", type(target).__name__)
    return f"{module}:{name}"
