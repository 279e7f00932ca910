"""Inspect AI eval logs as arms: each log an arm, each sample a scenario, each epoch a seed.

Inspect AI (https://inspect.aisi.org.uk) runs evals with epochs; it has no paired comparison of
two configurations with multiplicity control. This module reads its logs
(``inspect_ai.log.read_eval_log``) and checks they can be paired: the same sample ids and, per
sample, the same epochs in every log. Epoch ``e`` of a sample becomes seed ``e - 1`` of the
scenario named by the sample id, so runs pair by epoch across arms; the sample's target is the
reference. Judging (:mod:`counterfact.orchestrator.importers.judge`) replays the logs through the
ordinary engine.

A run flips by its **score** (default): the scorer's value is correct (Inspect's ``C``, or
``1``/``True``, or a value given) or not. The run's output is then ``correct: <completion>`` or
``incorrect: <completion>`` and a regex comparator reads the first word, so what each arm
changed to still shows the completion. Or by a **comparator** on the completion against the
target (``exact``, ``contains``, ``numeric``, ...), ignoring the scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.importers.logguard import check_completion, check_log

INPUT_CHARS = 2_000
"""Characters of a sample's input kept as the scenario's input (the question a report shows)."""
CORRECT_VALUES = ("C", 1, 1.0, True)
"""Score values that count as correct by default (Inspect's ``CORRECT`` is ``"C"``)."""
EXTRA = "pip install 'counterfact[inspect]'"
UNREAD_FIELDS = frozenset({"messages", "events", "store", "attachments"})
"""Sample fields an ``.eval`` log is read without (streamed past): the judging needs none."""


@dataclass(frozen=True)
class ImportedRun:
    """One sample at one epoch, as the log recorded it."""

    completion: str
    score: Any
    """The chosen scorer's value; None when the sample has no such score."""
    error: str | None
    duration_s: float


@dataclass
class ImportedArm:
    """One log: its name, what it ran, and its runs by (sample id, epoch)."""

    name: str
    path: Path
    task: str
    model: str
    runs: dict[tuple[str, int], ImportedRun] = field(default_factory=dict)
    targets: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    digest: str = ""


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:
        msg = f"importing Inspect AI logs needs inspect-ai: {EXTRA}"
        raise ConfigError(msg) from exc
    try:
        return read_eval_log(str(path), exclude_fields=set(UNREAD_FIELDS))
    except Exception as exc:  # inspect's own errors: one line naming the file
        msg = f"{path}: not an Inspect AI log ({type(exc).__name__}: {exc})".splitlines()[0]
        raise ConfigError(msg, field="LOG") from exc


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # chat messages, or a target list
        return "\n".join(_text(getattr(m, "text", m)) for m in value)
    return str(value)


def _score(sample: Any, scorer: str | None, path: Path) -> Any:
    scores = sample.scores or {}
    if not scores:
        return None
    if scorer is None:
        if len(scores) > 1:
            msg = (
                f"{path}: samples have several scores ({', '.join(scores)}); pick one with --score"
            )
            raise ConfigError(msg, field="--score")
        return next(iter(scores.values())).value
    if scorer not in scores:
        msg = f"{path}: no score {scorer!r} (the log has {', '.join(scores)})"
        raise ConfigError(msg, field="--score")
    return scores[scorer].value


def read_arm(path: Path, name: str | None, scorer: str | None) -> ImportedArm:
    """One log as an arm (named ``name``, default its task's name)."""
    if not path.is_file():
        raise ConfigError(f"{path} is not a file", field="LOG")
    digest = check_log(path)  # size limits, before Inspect decompresses anything
    log = _read(path)
    if log.status != "success" or log.samples is None:
        msg = (
            f"{path}: the log's status is {log.status!r} with "
            f"{len(log.samples or [])} samples; import finished logs only"
        )
        raise ConfigError(msg, field="LOG")
    arm = ImportedArm(name or log.eval.task, path, log.eval.task, str(log.eval.model))
    arm.digest = digest
    for sample in log.samples:
        sid = str(sample.id)
        arm.targets[sid] = _text(sample.target)
        arm.inputs[sid] = _text(sample.input)[:INPUT_CHARS]
        error = getattr(sample.error, "message", None) if sample.error else None
        completion = sample.output.completion if sample.output else ""
        arm.runs[(sid, int(sample.epoch))] = ImportedRun(
            completion=check_completion(path, sid, int(sample.epoch), completion),
            score=_score(sample, scorer, path),
            error=str(error) if error else None,
            duration_s=float(sample.total_time or 0.0),
        )
    return arm


def name_by_place(arms: Sequence[ImportedArm], named: Sequence[bool]) -> list[str]:
    """Name the logs that share a task and were not named (``named[i]`` False): each by its
    folder when those differ (``--log-dir logs/before`` and ``logs/after``: ``before`` and
    ``after``), else by its file name without the suffix. Renames ``arms`` in place; returns one
    line per renamed log, saying so.
    """
    by_task: dict[str, list[ImportedArm]] = {}
    for arm, given in zip(arms, named, strict=True):
        if not given:
            by_task.setdefault(arm.task, []).append(arm)
    lines = []
    for group in by_task.values():
        if len(group) < 2:
            continue
        folders = [a.path.parent.name for a in group]
        use_folders = all(folders) and len(set(folders)) == len(folders)
        by = "folder" if use_folders else "file name"
        for arm, folder in zip(group, folders, strict=True):
            arm.name = folder if use_folders else arm.path.stem
            lines.append(f"arm {arm.name!r} is {arm.path} (task {arm.task!r}, named by its {by})")
    return lines


def pick_baseline(arms: Sequence[ImportedArm], baseline: str | None) -> tuple[str, str | None]:
    """The baseline arm's name, and a note when it was chosen rather than named: no
    ``--baseline`` is the first log; the task of several logs is the first log of that task.
    """
    if baseline is None:
        return arms[0].name, f"baseline {arms[0].name!r}: the first log"
    if any(a.name == baseline for a in arms):
        return baseline, None
    shared = [a.name for a in arms if a.task == baseline]
    if not shared:
        return baseline, None  # the judging names the arms there are
    return shared[0], f"baseline {shared[0]!r}: the first log of task {baseline!r}"


def _epochs(arm: ImportedArm) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for sid, epoch in sorted(arm.runs):
        found.setdefault(sid, []).append(epoch)
    return found


def _few(items: Sequence[str]) -> str:
    shown = ", ".join(items[:8])
    return shown + (f" and {len(items) - 8} more" if len(items) > 8 else "")


def check_pairable(arms: Sequence[ImportedArm]) -> None:
    """Every log must hold the same samples, each with the same epochs (they pair by epoch).

    Raises:
        ConfigError: the first difference against the first log, named.
    """
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        msg = f"two logs are both named {dup[0]!r}; name them with --arm NAME=LOG"
        raise ConfigError(msg, field="--arm")
    first = arms[0]
    ref = _epochs(first)
    for arm in arms[1:]:
        got = _epochs(arm)
        missing, extra = sorted(set(ref) - set(got)), sorted(set(got) - set(ref))
        if missing or extra:
            parts = [f"lacks {_few(missing)}"] if missing else []
            parts += [f"has {_few(extra)} that {first.name!r} does not"] if extra else []
            msg = (
                f"the logs hold different samples: {arm.name!r} "
                + "; ".join(parts)
                + f" (against {first.name!r}); import logs of the same dataset"
            )
            raise ConfigError(msg, field="LOG")
        for sid in sorted(ref):
            if arm.targets[sid] != first.targets[sid] or arm.inputs[sid] != first.inputs[sid]:
                which = "target" if arm.targets[sid] != first.targets[sid] else "input"
                msg = (
                    f"sample {sid!r} has another {which} in {arm.name!r} than in "
                    f"{first.name!r} (ids match, the samples do not: another dataset or version?); "
                    "import logs of the same dataset"
                )
                raise ConfigError(msg, field="LOG")
        for sid, epochs in ref.items():
            if got[sid] != epochs:
                msg = (
                    f"sample {sid!r} has epochs {epochs} in {first.name!r} but {got[sid]} in "
                    f"{arm.name!r}; runs pair by epoch, so every log needs the same epochs"
                )
                raise ConfigError(msg, field="LOG")
