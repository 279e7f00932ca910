"""Checks: the sweep's ``comparator:`` and each question's own ``expect:``, built and tried on
the references before any run.

An eval set of 10,000 questions may give each its own ``expect``, most of them alike (``{kind:
numeric, tolerance: 0.01}`` on every arithmetic question): :class:`CheckBuilder` builds one
comparator per distinct spec (a custom target is imported once, a pattern compiled once) and
hands the same object to every question that asks for it. Each declared reference is then tried
with the check that will judge it (:func:`check_references`): a numeric check needs a number in
it, a regex an answer it extracts in time, a one-of check exactly one of its options.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from counterfact.exceptions import ConfigError, RefusalError
from counterfact.orchestrator.config.components import ComparatorConfig
from counterfact.orchestrator.config.model import Target
from counterfact.orchestrator.config.regexcheck import REGEX_CHECK_S, extracts_in_time
from counterfact.orchestrator.config.schema import ScenarioFileConfig
from counterfact.orchestrator.config.targets import parse_target
from counterfact.orchestrator.config.trust import custom_target
from counterfact.orchestrator.engine.judging.judge import build_judge
from counterfact.orchestrator.engine.loading.embedders import sentence_transformer
from counterfact.orchestrator.engine.loading.loader import load_target
from counterfact.probes.comparators import (
    COMPARATORS,
    Comparator,
    ContainsComparator,
    NumericComparator,
    OneOfComparator,
    RegexComparator,
    first_number,
    how_many_named,
    normalize_text,
)
from counterfact.probes.regex_search import REGEX_BUDGET_S, RegexBudget
from counterfact.probes.registry import Kind
from counterfact.probes.scenarios import ScenarioSpec

T = TypeVar("T")


def _callable(target: object, base_dir: Path, field: str) -> Any:
    if isinstance(target, str):
        return load_target(parse_target(target, base_dir=base_dir, field=field), field=field)
    return target


def build_component(
    registry: Mapping[str, Kind[T]],
    config: Any,
    section: str,
    base_dir: Path,
    *,
    target: Target | None = None,
) -> T:
    """The component a ``comparator:`` / ``similarity:`` / ``expect:`` section names, its target
    loaded (``section`` names the field in errors: ``scenarios[3].expect``); ``target``, when
    given, stands for the section's own (a declared check's, looked up by name).
    """
    options = {
        name: getattr(config, name)
        for name in registry[config.kind].takes
        if getattr(config, name, None) is not None  # not a field: built here (a judge)
    }
    if target is not None:
        options["target"] = target
    for name in ("target", "embedder"):
        if name in options:
            options[name] = _callable(options[name], base_dir, f"{section}.{name}")
    if isinstance(config, ComparatorConfig) and config.compiled is not None:
        options["pattern"] = config.compiled  # compiled when validated: not again
    if isinstance(config, ComparatorConfig) and config.kind == "judge":
        options["judge"] = build_judge(config, section)
    elif "model" in options:
        options["embedder"] = sentence_transformer(options.pop("model"), f"{section}.model")
    return registry[config.kind].build(options)


def _frozen(value: Any) -> Any:
    """A hashable stand-in for one option's value (a callable by its identity)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if callable(value):
        return ("callable", id(value))
    return value


class CheckBuilder:
    """Builds each distinct check once (by its spec) for every question that declares it.

    A custom check's ``target`` that names an entry of ``checks`` (the sweep file's ``checks:``)
    means that entry's callable; any other target is imported only when the check is
    ``trusted`` (it comes from the sweep file or the caller, not from a data file).
    """

    def __init__(self, base_dir: Path, checks: Mapping[str, Target] | None = None) -> None:
        self.base_dir = base_dir
        self.checks: Mapping[str, Target] = checks or {}
        self.used: set[str] = set()
        """The declared checks some question or the sweep's comparator asked for."""
        self.regex_budget = RegexBudget(REGEX_BUDGET_S, time.monotonic)
        """One budget for every regex check this sweep builds: judging searches share it."""
        self._built: dict[tuple[Any, ...], Comparator] = {}

    def build(self, config: ComparatorConfig, section: str, *, trusted: bool) -> Comparator:
        """The comparator ``config`` describes; the one already built when an identical spec
        was (``section`` names the field in errors, for the first question that declares it).
        ``trusted``: ``config`` comes from the sweep file or the caller, not from data.

        Raises:
            CodeInDataError: an untrusted custom target that names no declared check.
        """
        target = None
        if config.kind == "judge" and not trusted:
            msg = (
                "a data file may not declare a judge (it names an endpoint and an API key to "
                "send); declare comparator: {kind: judge, ...} in the sweep file instead"
            )
            raise ConfigError(msg, field=section)
        if config.kind == "custom" and config.target is not None:
            field = f"{section}.target"
            target = custom_target(config.target, self.checks, trusted=trusted, field=field)
            if isinstance(config.target, str) and config.target in self.checks:
                self.used.add(config.target)
        key = tuple((name, _frozen(getattr(config, name))) for name in type(config).model_fields)
        found = self._built.get(key)
        if found is None:
            found = build_component(COMPARATORS, config, section, self.base_dir, target=target)
            if isinstance(found, RegexComparator):
                found = dataclasses.replace(found, budget=self.regex_budget)
            self._built[key] = found
        return found

    def load_declared(self) -> None:
        """Import every declared check now (a typo in ``checks:`` fails before any run), each
        built once: the questions that name one get the same object.
        """
        for name in self.checks:
            config = ComparatorConfig(kind="custom", target=name)
            self.build(config, f"checks.{name}", trusted=True)
        self.used.clear()

    def unused(self) -> list[str]:
        """Declared checks no question and not the sweep's comparator asked for."""
        return sorted(set(self.checks) - self.used)

    @property
    def distinct(self) -> int:
        """Distinct checks built so far."""
        return len(self._built)


def _regex_problem(check: RegexComparator, reference: str, fix: str) -> str | None:
    """Why the pattern cannot judge against ``reference`` (the words after the pattern): too
    slow, or it extracts nothing.
    """
    found = extracts_in_time(check.pattern, reference)
    if found is None:
        return (
            f"/{check.pattern.pattern}/ took more than {REGEX_CHECK_S:g} s to search the "
            "reference (catastrophic backtracking, e.g. alternatives or quantifiers that "
            f"overlap such as (a|a)+); simplify {fix}.pattern"
        )
    if not found:
        return (
            f"/{check.pattern.pattern}/ extracts nothing from the reference {reference!r}; fix "
            f"{fix}.pattern or the reference"
        )
    return None


def _problem(check: Comparator, reference: str, fix: str) -> str | None:
    """Why ``check`` cannot judge outputs against ``reference`` (the words after the check's
    name; a regex's after its pattern's), or None; ``fix`` is the field that declares it.
    """
    if isinstance(check, RegexComparator):
        return _regex_problem(check, reference, fix)
    if isinstance(check, NumericComparator) and first_number(reference) is None:
        other = "choose another comparator" if fix == "comparator" else f"change {fix}"
        return (
            f"needs a number in the reference, got {reference!r}; write the expected number, "
            f"or {other}"
        )
    if isinstance(check, ContainsComparator) and not normalize_text(reference):
        return (
            f"needs an answer in the reference, got {reference!r} (empty once punctuation and "
            "spaces are dropped)"
        )
    if isinstance(check, OneOfComparator) and len(named := check.named(reference)) != 1:
        return (
            f"needs the reference to name exactly one of its options {list(check.choices)}; "
            f"{reference!r} names {how_many_named(named)}: fix the reference or {fix}.options"
        )
    return None


def _subject(check: Comparator, question: str | None) -> str:
    """Whose problem it is: the sweep's comparator (``question`` None) or a question's expect."""
    regex = isinstance(check, RegexComparator)
    if question is None:
        return f"the {check.kind} comparator" + ("'s pattern" if regex else "")
    return f"question {question!r}: its expect" + ("'s pattern" if regex else f" ({check.kind})")


Declared = Literal["list", "file", "default"]
"""How the sweep declares its questions: ``scenarios:`` as a list, ``scenarios: {file: ...}``,
or not at all (the one default scenario, its reference the top-level ``reference``)."""


def declared_as(scenarios: object) -> Declared:
    """How ``SweepConfig.scenarios`` declares the questions."""
    if scenarios is None:
        return "default"
    return "file" if isinstance(scenarios, ScenarioFileConfig) else "list"


def owner_of(index: int, scenario_id: str, declared: Declared) -> str:
    """The field path of a question, for errors: ``scenarios[3]`` or, from a file,
    ``scenarios.file (scenario 'q4')``.
    """
    if declared == "file":
        return f"scenarios.file (scenario {scenario_id!r})"
    return f"scenarios[{index}]"


def check_references(
    scenarios: tuple[ScenarioSpec, ...], default: Comparator, declared: Declared
) -> None:
    """Try every declared reference with the check that will judge it (the question's own
    ``expect``, else the sweep's comparator), before any run.

    Raises:
        RefusalError: a reference the check cannot judge against; the field names the question.
    """
    for i, sc in enumerate(scenarios):
        if sc.reference is None:
            continue
        owner = owner_of(i, sc.id, declared)
        where = "reference" if declared == "default" else f"{owner}.reference"
        check = sc.check(default)
        fix = f"{owner}.expect" if sc.expect is not None else "comparator"
        problem = _problem(check, sc.reference, fix)
        if problem is not None:
            subject = _subject(check, sc.id if sc.expect is not None else None)
            raise RefusalError(f"{subject} {problem}", field=where)
