"""Load user code by reference, in the driver and again inside each worker, and name it.

A :class:`TargetRef` names a ``package.module:attr`` or an absolute ``path/to/file.py:attr``;
loading it imports and executes that code, as any ``import`` does. The runner's *identity*
(:func:`runner_identity`) is ``runner_version`` when set, else a SHA-256 of the runner's module
source (the file for a file target; ``inspect.getsource`` of the module for a module target or a
Python callable). Any edit to that module therefore changes the identity: a resume refuses it
and the run cache misses. Code the runner imports from *other* modules is not hashed — set
``runner_version`` and bump it when such code changes.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from counterfact.exceptions import RunnerImportError
from counterfact.probes.runner import Runner


@dataclass(frozen=True)
class TargetRef:
    """A picklable pointer to a callable: resolved again inside each worker."""

    kind: Literal["module", "file"]
    location: str
    """Module name, or absolute path of a ``.py`` file."""
    attr: str
    """Attribute path inside the module (dots allowed: ``Class.method``)."""
    shipped_as: str | None = None
    """file only, on a cluster: the file's path inside the folder Ray ships to every node (the
    task's working directory there), used where ``location`` does not exist."""

    def __str__(self) -> str:
        return f"{self.location}:{self.attr}"


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


def _shipped(ref: TargetRef) -> Path:
    """The file's path, or on a node where it does not exist, the copy Ray shipped there.

    On a cluster the runner's folder travels as the ``working_dir`` (see
    :mod:`~counterfact.orchestrator.engine.executors.ray_ship`), the worker's working directory,
    so a node whose file system lacks the driver's path finds the file under it.
    """
    path = Path(ref.location)
    if path.is_file() or ref.shipped_as is None:
        return path
    copy = Path.cwd() / ref.shipped_as
    return copy if copy.is_file() else path


def load_target(ref: TargetRef, *, field: str = "runner") -> Callable[..., Any]:
    """Import the target and return the callable (cached per process).

    Raises:
        RunnerImportError: the module or file cannot be imported, the attribute is missing, or
            it is not callable.
    """
    if ref in _LOADED:
        return _LOADED[ref]
    if ref.kind == "file":
        try:
            path = _shipped(ref)
        except OSError as exc:  # a name too long for the file system, a loop of links ...
            msg = f"cannot use {ref.location[:120]!r} as a runner file: {exc.strerror or exc}"
            raise RunnerImportError(msg, field=field) from exc
        module = _load_file(path, field)
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


RunnerRef = TargetRef | Runner
"""What executors ship to workers: a target to import there, or a (picklable) callable."""


def resolve_runner(ref: RunnerRef) -> Runner:
    """The callable behind a runner reference."""
    return load_target(ref) if isinstance(ref, TargetRef) else ref


def describe_target(target: object) -> str:
    """A readable name for a target (string as given, or ``module:qualname`` for a callable)."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", "?")
    name = getattr(target, "__qualname__", type(target).__name__)
    return f"{module}:{name}"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def runner_identity(ref: RunnerRef, *, label: str, version: str | None = None) -> str:
    """``<label>@version:<v>``, or ``<label>@sha256:<16 hex of the module source>``, or
    ``<label>@unhashed`` when the source cannot be read (a notebook cell).
    """
    if version is not None:
        return f"{label}@version:{version}"
    if isinstance(ref, TargetRef) and ref.kind == "file":
        return f"{label}@sha256:{_digest(Path(ref.location).read_bytes())}"
    fn = resolve_runner(ref)
    module = inspect.getmodule(fn)
    try:
        source = inspect.getsource(module) if module is not None else inspect.getsource(fn)
    except (OSError, TypeError):
        return f"{label}@unhashed"
    return f"{label}@sha256:{_digest(source.encode())}"
