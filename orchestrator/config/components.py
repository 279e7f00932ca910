"""The sweep file's component sections: ``comparator``, ``similarity``, ``executor`` (with its
``rate_limit``), each resolved by name from its registry. Part of the schema
(the schema's ``SweepConfig`` holds them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import regex
from pydantic import (
    Field,
    PrivateAttr,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from counterfact.defaults import (
    COMPARATOR,
    EXECUTOR,
    INFRA_RETRIES,
    JOIN_TIMEOUT_S,
    MAX_IN_FLIGHT,
    MAX_RATE_LIMIT_WAIT_S,
    SIMILARITY,
)
from counterfact.orchestrator.config.model import Target, _Model
from counterfact.orchestrator.engine.executors.registry import (
    EXECUTORS,
    OPTIONS,
    refusal,
    unhonoured,
)
from counterfact.orchestrator.runners.chatconfig import ChatPrice
from counterfact.probes.comparators import (
    COMPARATORS,
    JUDGE_OPTIONS,
    normalize_text,
)
from counterfact.probes.regex_search import compile_pattern
from counterfact.probes.registry import Kind, option_problem
from counterfact.probes.similarity import SIMILARITIES


def _check_kind(registry: Mapping[str, Kind[Any]], model: Any, options: tuple[str, ...]) -> None:
    given = {name: getattr(model, name) for name in options if getattr(model, name) is not None}
    problem = option_problem(registry, str(model.kind), given)
    if problem is not None:
        raise ValueError(problem)


def _shorthand(data: Any) -> Any:
    """``exact`` means ``{kind: exact}``; ``module:attr`` / ``file.py:attr`` means
    ``{kind: custom, target: ...}``; a callable (Python API) means a custom one too.
    """
    if isinstance(data, str):
        return {"kind": "custom", "target": data} if ":" in data else {"kind": data}
    if callable(data):
        return {"kind": "custom", "target": data}
    return data


CHECK_NAME = regex.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
"""What a ``checks:`` name may be: questions refer to it by name, so no ``:`` (a target's mark)."""


def check_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a declared check (``checks:``), or None."""
    if not CHECK_NAME.fullmatch(name):
        return (
            f"the check name {name!r} must be letters, digits, '_' and '-', starting with a "
            "letter or '_' (questions refer to a check by this name)"
        )
    if name in COMPARATORS:
        return f"the check name {name!r} is a built-in comparator kind; pick another name"
    return None


def _known(registry: Mapping[str, Any], kind: str, what: str) -> str:
    if kind not in registry:
        msg = f"unknown {what} {kind!r}; known: {', '.join(sorted(registry))}"
        raise ValueError(msg)
    return kind


class ComparatorConfig(_Model):
    """How a flip is decided: the sweep's ``comparator:``, and a question's own ``expect:``."""

    kind: StrictStr = COMPARATOR
    """A name in :data:`counterfact.probes.comparators.COMPARATORS`."""
    threshold: StrictFloat | StrictInt | None = Field(default=None, allow_inf_nan=False)
    """similarity only: flip iff similarity < threshold (default 0.8); a finite number."""
    tolerance: StrictFloat | StrictInt | None = Field(default=None, allow_inf_nan=False)
    """numeric only: flip iff |output - reference| > tolerance (default 0); a finite number."""
    target: Target | None = None
    """custom only: ``callable(reference, output) -> bool`` (True means flipped)."""
    pattern: StrictStr | None = None
    """regex only: a Python regular expression; its first match (group 1 if it has a group) is
    the answer compared."""
    options: list[StrictStr] | None = None
    """one-of only: the choices of a multiple-choice question (at least two, distinct once
    normalized); the answer is the one option a text names."""

    model: StrictStr | None = Field(default=None, min_length=1)
    """judge only: the judge model's name, as the endpoint knows it."""
    base_url: StrictStr | None = None
    """judge only: the judge's OpenAI-compatible endpoint (default ``OPENAI_BASE_URL``, else
    OpenAI's own)."""
    api_key_env: StrictStr | None = Field(default=None, min_length=1)
    """judge only: the environment variable holding the judge's API key (default
    ``OPENAI_API_KEY``); the key's value is redacted from everything stored."""
    price: ChatPrice | None = None
    """judge only: USD per 1,000 input and output tokens, for the ``usd`` of the judge's spend."""
    rubric: StrictStr | None = Field(default=None, min_length=1)
    """judge only: what an output must do to pass (then the judge grades against the rubric,
    the reference given as context, instead of asking for the reference's answer)."""
    prompt: StrictStr | None = Field(default=None, min_length=1)
    """judge only: the judge's prompt, replacing the default; placeholders ``{reference}``,
    ``{output}`` (required) and ``{rubric}``; the reply must still start with ``SAME`` or
    ``DIFFERENT``."""
    recheck: StrictFloat | StrictInt | None = Field(default=None, allow_inf_nan=False)
    """judge only: the share of judgments asked twice (another seed) to measure the judge's
    self-disagreement (default 0.1; 0 turns it off)."""
    seed: StrictInt | None = None
    """judge only: the seed sent with each judge call (default 0; a recheck sends seed + 1)."""
    max_tokens: StrictInt | None = Field(default=None, gt=0)
    """judge only: the most tokens a judge reply may have (sent as ``max_tokens``; default none,
    the endpoint's own cap). Set it for a local server that keeps generating after a call is cut
    off (llama-cpp-python's): a verdict is a word or two, so 8 is enough. Not for models that reject
    ``max_tokens`` (OpenAI's reasoning models)."""
    timeout_s: StrictFloat | StrictInt | None = Field(default=None, allow_inf_nan=False)
    """judge only: seconds one judge call may take before it is cut off and tried again
    (default 60; 3 attempts in all, then that output is ``judge-unavailable``)."""

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, data: Any) -> Any:
        return _shorthand(data)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        return _known(COMPARATORS, value, "comparator kind")

    @field_validator("recheck")
    @classmethod
    def _recheck_share(cls, value: float | None) -> float | None:
        if value is not None and not 0.0 <= value <= 1.0:
            msg = f"'recheck' must lie in [0, 1] (a share of judgments), got {value}"
            raise ValueError(msg)
        return value

    @field_validator("timeout_s")
    @classmethod
    def _positive_timeout(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            msg = f"'timeout_s' must be > 0 (seconds a judge call may take), got {value}"
            raise ValueError(msg)
        return value

    @field_validator("prompt")
    @classmethod
    def _prompt_fields(cls, value: str | None) -> str | None:
        if value is not None:
            problem = judge_prompt_problem(value)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("threshold")
    @classmethod
    def _a_share(cls, value: float | None) -> float | None:
        if value is not None and not 0.0 <= value <= 1.0:
            msg = f"'threshold' must lie in [0, 1], got {value}"
            raise ValueError(msg)
        return value

    @field_validator("tolerance")
    @classmethod
    def _not_negative(cls, value: float | None) -> float | None:
        if value is not None and value < 0:
            msg = f"'tolerance' must be >= 0, got {value}"
            raise ValueError(msg)
        return value

    @field_validator("options")
    @classmethod
    def _choices(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            problem = choices_problem(value)
            if problem is not None:
                raise ValueError(problem)
        return value

    _compiled: regex.Pattern[str] | None = PrivateAttr(default=None)
    """``pattern`` compiled, once, as it is validated: the regex check built from this config
    takes it (10,000 questions with a pattern each compile 10,000 patterns, not twice that)."""

    @model_validator(mode="after")
    def _fields_match_kind(self) -> ComparatorConfig:
        if self.pattern is not None:
            self._compiled = _compiled(self.pattern)
        given = ("threshold", "tolerance", "target", "pattern", "options", *sorted(JUDGE_OPTIONS))
        _check_kind(COMPARATORS, self, given)
        return self

    @property
    def compiled(self) -> regex.Pattern[str] | None:
        """``pattern``, compiled (None without one)."""
        return self._compiled


def _compiled(pattern: str) -> regex.Pattern[str]:
    """``pattern`` compiled; one that does not compile is an error at ``pattern`` (raised from the
    model's own validator, so it is compiled once, and kept).
    """
    try:
        return compile_pattern(pattern)
    except regex.error as exc:
        msg = f"'pattern' is not a valid regular expression ({exc}): {pattern!r}"
        error = PydanticCustomError("value_error", "{problem}", {"problem": msg})
        details = InitErrorDetails(type=error, loc=("pattern",), input=pattern)
        raise ValidationError.from_exception_data("ComparatorConfig", [details]) from exc


JUDGE_FIELDS = frozenset({"reference", "output", "rubric"})
"""The placeholders a judge's ``prompt`` may use."""


def judge_prompt_problem(prompt: str) -> str | None:
    """Why ``prompt`` cannot be a judge's prompt (a message naming the fix), or None."""
    import string

    try:
        named = {name for _, name, _, _ in string.Formatter().parse(prompt) if name is not None}
    except ValueError as exc:
        return f"'prompt' is not a valid template ({exc}); write a literal brace as {{{{ or }}}}"
    unknown = sorted(named - JUDGE_FIELDS)
    if unknown:
        return (
            f"'prompt' uses unknown placeholder(s) {unknown}; the judge's prompt may use "
            "{reference}, {output} and {rubric}"
        )
    if "output" not in named:
        return "'prompt' must contain {output} (the answer the judge grades)"
    return None


def choices_problem(options: list[str]) -> str | None:
    """Why ``options`` cannot be a one-of check's choices (a message naming the fix), or None."""
    if len(options) < 2:
        return f"'options' needs at least two choices, got {options}; list every choice"
    seen: dict[str, str] = {}
    for option in options:
        key = normalize_text(option)
        if not key:
            msg = f"'options' holds {option!r}, which is empty once punctuation and spaces go"
            return msg + "; give each choice a word"
        if key in seen:
            return (
                f"'options' holds {seen[key]!r} and {option!r}, the same once normalized (case, "
                "punctuation, spacing); list each choice once"
            )
        seen[key] = option
    return None


class SimilarityConfig(_Model):
    """How similarity to the reference is measured."""

    kind: StrictStr = SIMILARITY
    """A name in :data:`counterfact.probes.similarity.SIMILARITIES`."""
    target: Target | None = None
    """custom only: ``callable(reference, outputs: list[str]) -> list of floats in [0, 1]``."""
    embedder: Target | None = None
    """embedding only: ``callable(texts: list[str]) -> one vector per text``."""
    model: StrictStr | None = None
    """embedding only: a sentence-transformers model name or local path (``pip install
    'counterfact[embeddings]'``), instead of ``embedder``."""

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, data: Any) -> Any:
        return _shorthand(data)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        return _known(SIMILARITIES, value, "similarity kind")

    @model_validator(mode="after")
    def _target_matches_kind(self) -> SimilarityConfig:
        _check_kind(SIMILARITIES, self, ("target", "embedder", "model"))
        if self.kind == "embedding" and self.embedder is not None and self.model is not None:
            msg = "kind 'embedding' takes 'embedder' or 'model', not both; give only one"
            raise ValueError(msg)
        if self.kind == "embedding" and self.embedder is None and self.model is None:
            msg = (
                "kind 'embedding' needs one of 'embedder: package.module:callable' (texts -> "
                "vectors) or 'model: <sentence-transformers name or path>'"
            )
            raise ValueError(msg)
        return self


class RateLimitConfig(_Model):
    """The ``executor.rate_limit`` section. A refused run waits (``Retry-After``, else
    exponential backoff with full jitter) and runs again; it never counts as a failure.
    """

    requests_per_minute: StrictFloat | StrictInt | None = Field(default=None, gt=0)
    """Requests the whole sweep may start per minute (a cluster-wide token bucket); default no
    cap."""
    max_wait_s: StrictFloat | StrictInt = Field(default=MAX_RATE_LIMIT_WAIT_S, gt=0)
    """Seconds one run may spend waiting on rate limits in all before it is recorded as failed
    with the error it last raised (an API that never lets it through must not hang the sweep)."""


class ExecutorConfig(_Model):
    """Where runs execute (``executor: local`` is short for ``{kind: local}``)."""

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, data: Any) -> Any:
        return {"kind": data} if isinstance(data, str) else data

    kind: StrictStr = EXECUTOR
    """A name in :data:`counterfact.orchestrator.engine.executors.EXECUTORS`: ``ray`` or
    ``local`` (in-process). Not named: ``local`` for an API-bound sweep (an ``async def`` runner
    or ``concurrency`` set) without an address, else ``ray`` (see
    :mod:`counterfact.orchestrator.config.executor_choice`)."""
    address: StrictStr | None = None
    """ray only: none starts a local Ray instance and stops it at the end; ``auto`` or a cluster
    address joins an existing cluster."""
    max_in_flight: StrictInt = Field(default=MAX_IN_FLIGHT, ge=1)
    """ray only: at most this many runs submitted and not yet finished."""
    retries: StrictInt = Field(default=0, ge=0)
    """Extra attempts for a run whose exception type is listed in ``retry_on``."""
    retry_on: list[StrictStr] = Field(default_factory=list)
    """Exception class names to retry (matched against the exception's class and its bases,
    so ``Exception`` matches every ordinary error)."""
    timeout_s: StrictFloat | StrictInt | None = Field(default=None, gt=0)
    """ray only: a run still going this many seconds after it was started is cancelled (its
    worker is killed) and recorded as a ``RunTimeout`` error."""
    infra_retries: StrictInt = Field(default=INFRA_RETRIES, ge=0)
    """ray only: how often Ray resubmits work lost to a dead worker or node."""
    join_timeout_s: StrictFloat | StrictInt = Field(
        default=JOIN_TIMEOUT_S, gt=0, le=3600, allow_inf_nan=False
    )
    """ray only, when joining a cluster (``address`` or ``--address``; ``auto`` reads
    ``RAY_ADDRESS``): seconds joining may take once the cluster's port answered, before the sweep
    stops with an error naming the address (a busy head on a slow network may need more)."""
    num_cpus: StrictInt | None = Field(default=None, ge=1)
    """ray only, without ``address``: logical CPUs of the local Ray instance (default: the
    machine's). For I/O-bound runners (API calls) set ``concurrency`` instead."""
    concurrency: StrictInt | None = Field(default=None, ge=1)
    """Runs in flight at once across the whole sweep, independent of CPUs: a few long-lived
    workers (about one per CPU; in-process with ``local``) each run many at once, ``async def``
    runners on an event loop, sync runners on a thread pool. Default: one run per CPU for a sync
    runner (CPU-bound work), 100 for an ``async def`` runner. Rate limits lower it on the fly."""
    rate_limit: RateLimitConfig = Field(default_factory=lambda: RateLimitConfig())
    """How runs that an API refuses (HTTP 429, ``counterfact.RateLimited``) are paced."""

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        return _known(EXECUTORS, value, "executor")

    @field_validator("address")
    @classmethod
    def _an_address(cls, value: str | None) -> str | None:
        if value is None or value == "auto" or value.startswith("ray://"):
            return value
        host, sep, port = value.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            msg = (
                f"{value!r} is not a Ray address; use 'auto', HOST:PORT (the head's GCS port, "
                "6379 by default, e.g. 10.0.0.5:6379) or ray://HOST:PORT"
            )
            raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _options_the_kind_honours(self) -> ExecutorConfig:
        if self.retries and not self.retry_on:
            msg = (
                f"retries={self.retries} retries nothing without 'retry_on'; list the exception "
                "class names to retry, e.g. retry_on: [TimeoutError, ConnectionError]"
            )
            raise ValueError(msg)
        section = {name: getattr(self, name) for name in OPTIONS if name in self.model_fields_set}
        for option in unhonoured(self.kind, section):
            raise ValueError(refusal(option, self.kind))
        if self.num_cpus is not None and self.address is not None:
            raise ValueError(refusal("num_cpus", self.kind))
        return self
