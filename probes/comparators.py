"""Comparators: did one output flip relative to the reference?

Every comparator answers ``flipped(reference, output, similarity) -> bool``; ``similarity`` is the
output's similarity to the reference, computed by the sweep's similarity measure, so the
``similarity`` comparator and the null band use one instrument.

Builtins:

- ``exact``: flipped iff ``output != reference``.
- ``normalized``: flipped iff the normalized texts differ; normalization is Unicode NFKC,
  case-folding, removing punctuation (Unicode category P*) and collapsing whitespace.
- ``numeric``: the first number in each text is compared; flipped iff
  ``abs(output - reference) > tolerance`` or the output holds no number.
- ``similarity`` (the default): flipped iff ``similarity < threshold`` (strict; default 0.8).
- ``contains``: flipped iff the normalized reference does not occur in the normalized output
  (``Canberra`` is in ``The capital is Canberra.``).
- ``regex``: ``pattern`` extracts the first match (group 1 when the pattern has a group) from
  the reference and from the output; flipped iff they differ once normalized, or the output has
  no match. Patterns run on the ``regex`` package (Python's ``re`` syntax and semantics), each
  search under a deadline of :data:`REGEX_MATCH_S`: an output the pattern cannot search in time
  (catastrophic backtracking) is a failed comparison (:class:`ComparisonTimeout`: that seed is
  unscored and in doubt), never a hang; a reference it cannot search in its own deadline is a
  :class:`ScoringError` (one cut short by a spent budget leaves that seed unscored instead).
  A sweep's regex checks share one :class:`RegexBudget` (:data:`REGEX_BUDGET_S` of slow
  searching): once it is spent each search has :data:`REGEX_SPENT_MATCH_S`, and one cut short
  fails the same way, saying why.
- ``one-of``: a multiple choice among ``options``; the answer is the one option a text names
  (normalized, as whole words; the longest option wins where options overlap, ``New York``
  over ``York``); flipped iff the output's answer differs from the reference's, or the output
  names none or several.
- ``custom``: a user callable ``target(reference, output) -> bool``, True meaning *flipped*.
- ``judge``: a model asked whether the output gives the same answer as the reference (or meets
  a ``rubric``). The judge itself — the client, its cache, its spend — is built by the
  orchestrator (``counterfact.orchestrator.engine.judging.judge``) and handed in as a
  :class:`Judge`; this module only asks it. A reply that is not a verdict, or no answer at all, is a
  failed comparison (``JudgeUnparseable``, ``JudgeUnavailable``: that seed is unscored and in
  doubt), never a flip.

``numeric``, ``contains``, ``regex``, ``one-of``, ``custom`` and ``judge`` judge the *answer*
(``answer_level``); the others compare whole outputs, so claims then say the *output* changed.
Each comparator also gives its ``options()`` (the settings that make it this check, JSON data),
so a record can say which check judged a question (:func:`check_spec`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol, runtime_checkable

import regex

from counterfact.defaults import NUMERIC_TOLERANCE, SIMILARITY_THRESHOLD
from counterfact.exceptions import ComparisonTimeout, ScoringError
from counterfact.probes.judging import JudgeComparator
from counterfact.probes.regex_search import (
    REGEX_MATCH_S,
    RegexBudget,
    compile_pattern,
    extract,
)
from counterfact.probes.registry import Kind


class Comparator(Protocol):
    """Decides whether one output flipped relative to the reference."""

    @property
    def kind(self) -> str:
        """The registry name; ``similarity`` lets the null band gate verdicts (rule 5)."""
        ...

    def describe(self) -> str:
        """Words for claims' bounds (``similarity < 0.8``)."""
        ...

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True when ``output`` flipped; ``similarity`` is its score against ``reference``."""
        ...

    @property
    def answer_level(self) -> bool:
        """True when it judges the answer (a number, a phrase, a match), not the whole text."""
        ...

    def options(self) -> dict[str, Any]:
        """The settings that make it this check besides its kind (``{"tolerance": 0.01}``), as
        JSON data; empty for a kind without any.
        """
        ...


@dataclass(frozen=True)
class ExactComparator:
    """Flipped iff the output differs from the reference at all."""

    kind: str = "exact"
    answer_level: bool = False

    def describe(self) -> str:
        """``exact match``."""
        return "exact match"

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True iff the texts differ at all."""
        return output != reference

    def options(self) -> dict[str, Any]:
        """None: the kind says it all."""
        return {}


_WS = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """NFKC, case-fold, drop punctuation, collapse whitespace, strip."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded if not unicodedata.category(ch).startswith("P"))
    return _WS.sub(" ", kept).strip()


@dataclass(frozen=True)
class NormalizedComparator:
    """Flipped iff the texts differ after NFKC, case-folding, dropping punctuation and collapsing
    whitespace.
    """

    kind: str = "normalized"
    answer_level: bool = False

    def describe(self) -> str:
        """``normalized text match``."""
        return "normalized text match"

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True iff the normalized texts differ."""
        return normalize_text(output) != normalize_text(reference)

    def options(self) -> dict[str, Any]:
        """None: the kind says it all."""
        return {}


_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def first_number(text: str) -> float | None:
    """The first number written in ``text`` (thousands commas allowed), or None."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    return float(match.group(0).replace(",", ""))


@dataclass(frozen=True)
class NumericComparator:
    """Flipped iff the first numbers differ by more than ``tolerance`` (or the output has none)."""

    tolerance: float = NUMERIC_TOLERANCE
    kind: str = "numeric"
    answer_level: bool = True

    def describe(self) -> str:
        """``numeric within ±tolerance``."""
        return f"numeric within ±{self.tolerance:g}"

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True iff the first numbers differ by more than the tolerance, or the output has none."""
        expected = first_number(reference)
        if expected is None:
            msg = (
                f"numeric comparator: the reference holds no number ({reference!r:.80}); "
                "give the scenario a numeric reference or choose another comparator"
            )
            raise ScoringError(msg)
        observed = first_number(output)
        return observed is None or abs(observed - expected) > self.tolerance

    def options(self) -> dict[str, Any]:
        """``{"tolerance": ...}``."""
        return {"tolerance": self.tolerance}


@dataclass(frozen=True)
class SimilarityComparator:
    """Flipped iff similarity < threshold (strict)."""

    threshold: float = SIMILARITY_THRESHOLD
    kind: str = "similarity"
    answer_level: bool = False

    def describe(self) -> str:
        """``similarity < threshold``."""
        return f"similarity < {self.threshold:g}"

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True iff ``similarity < threshold`` (strict)."""
        return similarity < self.threshold

    def options(self) -> dict[str, Any]:
        """``{"threshold": ...}``."""
        return {"threshold": self.threshold}


@dataclass(frozen=True)
class ContainsComparator:
    """Flipped iff the normalized reference does not occur in the normalized output."""

    kind: str = "contains"
    answer_level: bool = True

    def describe(self) -> str:
        """``output contains the reference``."""
        return "output contains the reference"

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True iff the normalized reference does not occur, as whole words, in the normalized
        output (``no`` is not found in ``i do not know``).
        """
        expected = normalize_text(reference)
        if not expected:
            msg = (
                f"contains comparator: the reference {reference!r:.80} is empty once normalized "
                "(punctuation and spaces only); give the answer it should contain"
            )
            raise ScoringError(msg)
        return not contained(expected, normalize_text(output))

    def options(self) -> dict[str, Any]:
        """None: the kind says it all."""
        return {}


def contained(needle: str, text: str) -> bool:
    """``needle`` occurs in ``text`` on word boundaries (both already normalized)."""
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", text) is not None


def choice_pattern(options: tuple[str, ...]) -> re.Pattern[str]:
    """One search for every option as whole words in normalized text, the longest first (so
    ``new york`` is found as itself, not as ``york``).
    """
    needles = sorted({normalize_text(o) for o in options}, key=lambda n: (-len(n), n))
    alternatives = "|".join(re.escape(n) for n in needles)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


@dataclass(frozen=True)
class OneOfComparator:
    """A multiple choice: flipped iff the option the output names differs from the one the
    reference names (or the output names none, or more than one).
    """

    choices: tuple[str, ...]
    """The choices, as declared (at least two, distinct once normalized)."""
    kind: str = "one-of"
    answer_level: bool = True
    _search: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _by_text: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_search", choice_pattern(self.choices))
        object.__setattr__(self, "_by_text", {normalize_text(o): o for o in self.choices})

    def describe(self) -> str:
        """``the option named, one of A, B, C``."""
        return f"the option named, one of {', '.join(self.choices)}"

    def options(self) -> dict[str, Any]:
        """``{"options": [...]}``."""
        return {"options": list(self.choices)}

    def named(self, text: str) -> tuple[str, ...]:
        """The distinct options ``text`` names, in the order it first names them."""
        found = self._search.findall(normalize_text(text))
        return tuple(dict.fromkeys(self._by_text[f] for f in found))

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True iff the output does not name exactly the one option the reference names."""
        expected = self.named(reference)
        if len(expected) != 1:
            msg = (
                f"one-of comparator: the reference ({reference!r:.80}) names "
                f"{how_many_named(expected)} of the options {list(self.choices)}; it must name "
                "exactly one"
            )
            raise ScoringError(msg)
        return self.named(output) != expected


def how_many_named(named: tuple[str, ...]) -> str:
    """How many options a text names, in words: ``none``, or ``2 (Paris, Lyon)``."""
    return "none" if not named else f"{len(named)} ({', '.join(named)})"


@dataclass(frozen=True)
class RegexComparator:
    """Flipped iff the extracted answers differ once normalized (or the output has none)."""

    pattern: regex.Pattern[str]
    kind: str = "regex"
    answer_level: bool = True
    budget: RegexBudget | None = field(default=None, compare=False, repr=False)
    """The sweep's shared regex budget; None searches under the per-search deadline only."""

    def describe(self) -> str:
        """``answer extracted by /pattern/``."""
        return f"answer extracted by /{self.pattern.pattern}/"

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """True iff the output's extracted answer is missing or differs from the reference's."""
        expected = self._extract(reference, "reference")
        if expected is None:
            msg = (
                f"regex comparator: the pattern /{self.pattern.pattern}/ extracts nothing (or "
                f"only blanks) from the reference ({reference!r:.80}); fix the pattern or the "
                "reference"
            )
            raise ScoringError(msg)
        observed = self._extract(output, "output")
        return observed is None or normalize_text(observed) != normalize_text(expected)

    def options(self) -> dict[str, Any]:
        """``{"pattern": ...}``."""
        return {"pattern": self.pattern.pattern}

    def _extract(self, text: str, what: str) -> str | None:
        budget = self.budget
        deadline = REGEX_MATCH_S if budget is None else budget.deadline(self.pattern.pattern)
        try:
            if budget is None:
                return extract(self.pattern, text)
            return budget.search(self.pattern, text, deadline)
        except TimeoutError:
            if budget is not None and deadline < REGEX_MATCH_S:  # cut short by a spent budget
                msg = (
                    f"regex comparator: /{self.pattern.pattern}/ was cut short at {deadline:g} s "
                    f"on a {len(text)}-character {what}: the sweep's {budget.seconds:g} s of slow "
                    f"regex searching are spent ({len(budget.timed_out)} pattern(s) timed out), "
                    "so each search now has that long; simplify the patterns that time out"
                )
                raise ComparisonTimeout(msg) from None
            self._timed_out(text, what)

    def _timed_out(self, text: str, what: str) -> NoReturn:
        """Raise the timeout of a search that outlasted its own deadline (never returns)."""
        msg = (
            f"regex comparator: the pattern /{self.pattern.pattern}/ took more than "
            f"{REGEX_MATCH_S:g} s to search a {len(text)}-character {what} (catastrophic "
            "backtracking, e.g. alternatives or quantifiers that overlap such as (a|a)+); "
            "simplify comparator.pattern"
        )
        if what == "output":
            raise ComparisonTimeout(msg) from None
        raise ScoringError(msg) from None


def _numpy_bool(value: object) -> bool:
    """True for ``numpy.bool_`` (numpy imported only here: the CLI's start stays fast)."""
    import numpy as np

    return isinstance(value, np.bool_)


@dataclass(frozen=True)
class CustomComparator:
    """A user callable ``target(reference, output) -> bool``; True means flipped."""

    target: Callable[[str, str], bool]
    kind: str = "custom"
    answer_level: bool = True

    def describe(self) -> str:
        """``custom comparator <qualname>``."""
        name = getattr(self.target, "__qualname__", repr(self.target))
        return f"custom comparator {name}"

    def flipped(self, reference: str, output: str, similarity: float) -> bool:
        """The user callable's answer, checked to be a bool."""
        try:
            result: object = self.target(reference, output)
        except Exception as exc:
            msg = f"{self.describe()} raised {type(exc).__name__}: {exc}"
            raise ScoringError(msg) from exc
        if not isinstance(result, bool) and not _numpy_bool(result):
            msg = f"{self.describe()} returned {type(result).__name__}; it must return a bool"
            raise ScoringError(msg)
        return bool(result)

    def options(self) -> dict[str, Any]:
        """``{"target": "module:qualname"}`` (the callable, named)."""
        module = getattr(self.target, "__module__", None)
        name = getattr(self.target, "__qualname__", None) or repr(self.target)
        return {"target": f"{module}:{name}" if module else name}


@runtime_checkable
class Batched(Protocol):
    """A comparator that judges a batch of outputs at once (``judge``, and a check wrapped
    around one: ``blame --expect``'s turned-round check).
    """

    def prepare(
        self, reference: str, outputs: list[str], arms: Sequence[str] | None = None
    ) -> None:
        """Judge ``outputs`` now; ``arms``: the arm of each, which its call is charged to."""
        ...


def prepare_batch(
    comparator: Comparator, reference: str, outputs: list[str], arms: Sequence[str] | None = None
) -> None:
    """Let a comparator that judges in batches (``judge``, or a check around one) judge
    ``outputs`` before they are asked about one at a time (``arms``: the arm of each, which its
    call is charged to); a no-op for every other kind.
    """
    if isinstance(comparator, Batched):
        comparator.prepare(reference, outputs, arms)


def _judge(options: Mapping[str, Any]) -> Comparator:
    """From ``judge``: the judge the orchestrator built from the section's settings."""
    judge = options.get("judge")
    if judge is None:
        msg = (
            "judge comparator: no judge was built for it (build it with the sweep's config, "
            "comparator: {kind: judge, model: ...})"
        )
        raise ScoringError(msg)
    return JudgeComparator(judge=judge)


JUDGE_OPTIONS = frozenset(
    {
        "model",
        "base_url",
        "api_key_env",
        "price",
        "rubric",
        "prompt",
        "recheck",
        "seed",
        "max_tokens",
        "timeout_s",
    }
)
"""What ``comparator: {kind: judge, ...}`` takes (``judge``: the built judge, added by the
orchestrator)."""


def _similarity(options: Mapping[str, Any]) -> Comparator:
    return SimilarityComparator(threshold=float(options.get("threshold", SIMILARITY_THRESHOLD)))


def _numeric(options: Mapping[str, Any]) -> Comparator:
    return NumericComparator(tolerance=float(options.get("tolerance", NUMERIC_TOLERANCE)))


def _regex(options: Mapping[str, Any]) -> Comparator:
    """From ``pattern``: its text, or the pattern already compiled (by the config's check)."""
    pattern = options["pattern"]
    if isinstance(pattern, regex.Pattern):
        return RegexComparator(pattern=pattern)
    return RegexComparator(pattern=compile_pattern(str(pattern)))


def _one_of(options: Mapping[str, Any]) -> Comparator:
    return OneOfComparator(choices=tuple(str(o) for o in options["options"]))


COMPARATORS: Mapping[str, Kind[Comparator]] = {
    "similarity": Kind(_similarity, takes=frozenset({"threshold"})),
    "exact": Kind(lambda _: ExactComparator()),
    "normalized": Kind(lambda _: NormalizedComparator()),
    "numeric": Kind(_numeric, takes=frozenset({"tolerance"})),
    "contains": Kind(lambda _: ContainsComparator()),
    "regex": Kind(_regex, takes=frozenset({"pattern"}), needs=frozenset({"pattern"})),
    "one-of": Kind(_one_of, takes=frozenset({"options"}), needs=frozenset({"options"})),
    "custom": Kind(
        lambda o: CustomComparator(o["target"]),
        takes=frozenset({"target"}),
        needs=frozenset({"target"}),
    ),
    "judge": Kind(_judge, takes=JUDGE_OPTIONS | {"judge"}, needs=frozenset({"model"})),
}
"""Comparator kinds by name: the config schema, the CLI and the resolver read this one table."""


def _shown(name: str, value: Any) -> str:
    if name == "pattern":
        return f"/{value}/"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def check_spec(comparator: Comparator) -> str:
    r"""The check in one line, its kind and settings: ``numeric(tolerance=0.01)``, ``contains``,
    ``regex(pattern=/Answer: (\d+)/)``, ``one-of(options=["A", "B"])``.
    """
    options = comparator.options()
    if not options:
        return comparator.kind
    shown = ", ".join(f"{k}={_shown(k, v)}" for k, v in options.items())
    return f"{comparator.kind}({shown})"
