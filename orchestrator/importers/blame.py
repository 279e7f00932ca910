"""``counterfact blame``: replay one recorded chat call with parts of its context removed, and
find the minimal sets of parts that made it answer as it did (rule 10, by reruns).

The call becomes a one-scenario culprit search over the built-in chat runner
(``runner: {kind: chat, call: call}``): its request is the scenario's input, sent as recorded
with each probe's parts taken out; its recorded answer is the reference (``--expect``: the
answer it should have given, and a part is to blame when removing it makes the answer right);
the suspects are every part but the question and ``--keep``, ordered by a free lexical prior.
``--comparator judge`` has a model judge whether an answer is the same (by default the call's
own model at its endpoint; ``--judge-model``, ``--judge-base-url``, ``--judge-api-key-env``).
A call sampled at temperature 0 is replayed on 2 seeds under the majority rule; any other on
``samples`` seeds under ``decide: test`` (a paired test per probe and fresh-seed confirmation),
so a sampled model's noise is never claimed as a culprit, with ``bisect.stop_early``: a probe
stops drawing seeds once the rest cannot change its decision (the decision all ``samples``
seeds would give, for fewer model calls).

The search is :func:`~counterfact.orchestrator.drivers.bisect.run_bisect` itself, so its run
directory resumes, its runs are cached and its record is ``bisect.json``; ``blame.json`` adds the
call, its parts and the replay's check.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from counterfact.defaults import ALPHA
from counterfact.exceptions import BudgetExhausted, ConfigError
from counterfact.orchestrator.config.chatcheck import url_problem
from counterfact.orchestrator.config.loading import validate_config
from counterfact.orchestrator.config.resolve import ResolvedBisect, resolve_bisect
from counterfact.orchestrator.drivers.bisect import BisectResult, run_bisect
from counterfact.orchestrator.importers.blame_share import Shared
from counterfact.orchestrator.importers.recorded import RecordedCall, safe_name
from counterfact.orchestrator.runners.chatparts import Level, split
from counterfact.orchestrator.storage.atomic import write_json
from counterfact.probes.expected import ExpectedAnswer
from counterfact.records.bisect import BisectRecord
from counterfact.records.blame import (
    BlameRecord,
    PartRecord,
    RankRecord,
    ReplayRecord,
)
from counterfact.records.paths import BLAME_FILE
from counterfact.verdicts.bisect.rank import lexical

CALL_INPUT = "call"
"""The scenario input that holds the recorded request."""


@dataclass(frozen=True)
class BlameOptions:
    """How to replay and search (the ``blame`` command's flags)."""

    base_url: str | None = None
    """The endpoint; None: ``OPENAI_BASE_URL``, else OpenAI's."""
    api_key_env: str = "OPENAI_API_KEY"
    parts: Level = "paragraphs"
    comparator: str | Mapping[str, Any] = "contains"
    expect: str | None = None
    keep: tuple[str, ...] = ()
    suspects: tuple[str, ...] = ()
    """Named suspects instead of every part (empty: every part)."""
    samples: int = 5
    """Seeds per probe for a sampled call (a call at temperature 0 uses 2)."""
    rank: Literal["lexical", "given", "loo", "surrogate"] = "lexical"
    decide: Literal["auto", "majority", "test"] = "auto"
    """``auto``: the majority rule on 2 seeds for a call at temperature 0 (the search's own
    ``auto``: decided again by the test if a probe's seeds split, underpowered at 2 seeds, so
    rerun with ``--decide test``), ``decide: test`` on ``samples`` seeds otherwise."""
    max_probes: int = 200
    max_culprits: int = 1
    alpha: float = ALPHA
    executor: str | Mapping[str, Any] | None = None
    model: str | None = None
    """Replay at this model instead of the call's own."""
    price: tuple[float, float] | None = None
    """USD per 1,000 input and output tokens: each replay's cost gets ``usd``."""
    judge_model: str | None = None
    """With ``comparator="judge"``: the judge model (None: the model the replay asks for)."""
    judge_base_url: str | None = None
    """The judge's endpoint (None: the replay's, :attr:`base_url`)."""
    judge_api_key_env: str | None = None
    """The judge's key variable (None: the replay's, :attr:`api_key_env`)."""
    budget: Mapping[str, float] = field(default_factory=dict)
    """One call's budget (``--budget runs=N usd=X``): ``runs``, the replays' model calls
    (every attempt; the judge's calls are not runs); ``usd``, the replays' priced cost and the
    judge's. The search stops when one is reached, its ``bisect.json``/``blame.json``
    written."""


@dataclass(frozen=True)
class BlameResult:
    """One call blamed: ``blame.json``'s record and the search it came from."""

    record: BlameRecord
    bisect: BisectResult


def _sampled(request: Mapping[str, Any]) -> bool:
    """The call samples: any temperature but 0 (the API's default, 1, when none is given)."""
    temperature = request.get("temperature")
    return not (isinstance(temperature, int | float) and temperature == 0)


def blame_plan(call: RecordedCall, options: BlameOptions) -> ResolvedBisect:
    """The culprit search that explains ``call``, checked and ordered; nothing sent yet.

    Raises:
        ConfigError: the call cannot be replayed (no model, fewer than two suspects, an
            unknown part id in ``keep`` or ``suspects``).
    """
    sampled = options.decide == "test" or (options.decide == "auto" and _sampled(call.request))
    reference = options.expect if options.expect is not None else call.answer
    # without a recorded answer, seed 0's reply becomes the reference and is not a sample of
    # the paired test: one more seed keeps --samples seeds testable
    runner: dict[str, Any] = {
        "kind": "chat",
        "call": CALL_INPUT,
        "parts": options.parts,
        "api_key_env": options.api_key_env,
    }
    runner |= {"base_url": options.base_url} if options.base_url else {}
    runner |= {"model": options.model} if options.model else {}
    if options.price is not None:
        runner["price"] = {"input_per_1k": options.price[0], "output_per_1k": options.price[1]}
    raw: dict[str, Any] = {
        "name": f"blame-{safe_name(call.id)}",
        "runner": runner,
        "samples": (options.samples + (reference is None)) if sampled else 2,
        "scenarios": [
            {
                "id": safe_name(call.id),
                "inputs": {CALL_INPUT: dict(call.request)},
                "reference": reference,
            }
        ],
        "comparator": judge_comparator(call, options),
        "bisect": {
            "suspects": list(options.suspects) or "all",
            "keep": list(options.keep),
            "max_probes": options.max_probes,
            "max_culprits": options.max_culprits,
            "decide": "test" if sampled else "auto",
            "stop_early": sampled,  # a probe stops once its other seeds cannot change it
            "rank": options.rank if options.rank in ("loo", "surrogate") else "given",
        },
        "statistics": {"alpha": options.alpha},
    }
    if options.executor is not None:
        raw["executor"] = options.executor
    if options.budget:
        raw["budget"] = dict(options.budget)
    if reference is None:
        raw["scenarios"][0].pop("reference")
    try:
        plan = resolve_bisect(validate_config(raw), base_dir=Path.cwd())
    except ConfigError as exc:  # name blame's own flags, not the sweep-file keys it built
        raise _as_flags(exc) from exc
    return _ordered(_expected(plan, options), call, options)


def judge_comparator(call: RecordedCall, options: BlameOptions) -> str | Mapping[str, Any]:
    """The comparator ``--comparator`` names; ``judge`` is a model judge: by default the model
    the replay asks for, at the replay's endpoint with its key (and its ``--price``).
    """
    if options.comparator != "judge":
        return options.comparator
    judge: dict[str, Any] = {
        "kind": "judge",
        "model": options.judge_model or model_of(call, options),
        "api_key_env": options.judge_api_key_env or options.api_key_env,
    }
    base_url = options.judge_base_url or options.base_url
    if base_url:
        judge["base_url"] = base_url
    own = options.judge_model is None and options.judge_base_url is None
    if own and options.price is not None:  # the call's own model: the call's price
        judge["price"] = {"input_per_1k": options.price[0], "output_per_1k": options.price[1]}
    return judge


FLAGS = {
    "comparator.model": "--judge-model",
    "comparator.base_url": "--judge-base-url",
    "comparator.api_key_env": "--judge-api-key-env",
    "runner.kind": "blame",  # the openai package missing: the command itself needs it
    "runner.model": "--model",
    "runner.base_url": "--base-url",
    "runner.api_key_env": "--api-key-env",
    "bisect.keep": "--keep",
    "bisect.suspects": "--suspects",
    "comparator": "--comparator",
    "samples": "--samples",
}
"""The sweep-file keys ``blame`` builds, and the flag each comes from."""


def _as_flags(exc: ConfigError) -> ConfigError:
    """``exc`` naming the flag that set its field (the call, for a scenario's input)."""
    field = exc.field or ""
    words = str(exc).removeprefix(f"{field}: ")
    if field.startswith("scenario "):
        return ConfigError(words, field="CALL")
    head = next((k for k in FLAGS if field == k or field.startswith(k + ".")), None)
    return type(exc)(words, field=FLAGS[head]) if head is not None else exc


def _expected(plan: ResolvedBisect, options: BlameOptions) -> ResolvedBisect:
    """With ``--expect``: the check turned round (flipped = the answer became the expected)."""
    if options.expect is None:
        return plan
    sweep = replace(plan.sweep, comparator=ExpectedAnswer(plan.sweep.comparator))
    return replace(plan, sweep=sweep)


def _ordered(plan: ResolvedBisect, call: RecordedCall, options: BlameOptions) -> ResolvedBisect:
    if options.rank != "lexical" or options.suspects:
        return plan
    target = options.expect if options.expect is not None else (call.answer or "")
    texts = {p.id: p.text for p in split(call.request["messages"], options.parts)}
    order = lexical(texts, list(plan.settings.suspects), target)
    return replace(plan, settings=replace(plan.settings, suspects=tuple(order)))


def part_records(call: RecordedCall, level: Level, suspects: Sequence[str]) -> list[PartRecord]:
    """The call's parts as ``blame.json`` lists them."""
    searched = set(suspects)
    return [
        PartRecord(
            id=p.id,
            message=p.message,
            role=p.role,
            text=p.text,
            chars=len(p.text),
            suspect=p.id in searched,
        )
        for p in split(call.request["messages"], level)
    ]


def _replay(record: BisectRecord, answer: str | None) -> ReplayRecord:
    base = next((p for p in record.probes if not p.ablated), None)
    if base is None:
        return ReplayRecord(reproduced=0, seeds=0, recorded_answer=answer)
    return ReplayRecord(
        reproduced=base.samples - base.flips, seeds=base.samples, recorded_answer=answer
    )


def _seeds_vary(result: BisectResult, base: str) -> bool | None:
    """Whether the baseline's replies differed across its seeds (None: none answered)."""
    outputs = {r.output for r in result.runs if r.arm == base and r.output is not None}
    return len(outputs) > 1 if outputs else None


def model_of(call: RecordedCall, options: BlameOptions) -> str:
    """The model the replay asks for."""
    return str(options.model or call.request.get("model"))


def check_server(options: BlameOptions, model: str) -> None:
    """The endpoint answers and serves ``model``, asked once before anything is spent (a
    server without a model list is taken at its word).

    Raises:
        ConfigError: the server does not answer, refuses the key, or lists other models only.
    """
    import openai

    key = os.environ.get(options.api_key_env, "")
    if not key:
        msg = (
            f"environment variable {options.api_key_env} is not set; export it (any text, e.g. "
            "none, for a server without keys) or name another with --api-key-env"
        )
        raise ConfigError(msg, field="--api-key-env")
    client = openai.OpenAI(base_url=options.base_url, api_key=key, max_retries=0, timeout=10.0)
    where = options.base_url or "OpenAI's API"
    try:
        served = [m.id for m in client.models.list()]
    except openai.NotFoundError:
        return
    except openai.APIConnectionError as exc:
        msg = f"the server at {where} does not answer ({exc}); start it, or pass --base-url"
        raise ConfigError(msg, field="--base-url") from exc
    except openai.APIStatusError as exc:
        msg = f"the server at {where} refused the model list (HTTP {exc.status_code})"
        raise ConfigError(msg, field="--base-url") from exc
    if served and model not in served:
        msg = (
            f"the server at {where} does not serve model {model!r}; it serves "
            f"{', '.join(served[:10])}; pass --model to replay at one of them"
        )
        raise ConfigError(msg, field="--model")


def blame_call(
    call: RecordedCall,
    options: BlameOptions,
    *,
    run_dir: Path | None,
    fresh: bool = False,
    check: bool = True,
    shared: Shared | None = None,
) -> BlameResult:
    """Blame ``call``: the search's records in ``run_dir`` (``runs.jsonl``, ``bisect.json``,
    ``blame.json``), resumed when it already holds some. ``shared``: the search runs on its
    part of a rate controller shared with other calls (``blame DIR``).

    Raises:
        ConfigError: the call cannot be replayed; nothing was sent.
    """
    for url, flag in (
        (options.base_url, "--base-url"),
        (options.judge_base_url, "--judge-base-url"),
    ):
        if url is not None and (problem := url_problem(url)) is not None:
            raise ConfigError(problem, field=flag)
    plan = blame_plan(call, options)
    if check:
        check_server(options, model_of(call, options))
    try:
        result = _search(plan, run_dir, fresh, shared)
    except BudgetExhausted as exc:  # the search so far is recorded, then the stop raised
        raise _blamed_so_far(exc, call, options, plan, run_dir) from None
    return _blamed(call, options, plan, result, run_dir)


def _blamed_so_far(
    exc: BudgetExhausted[BisectResult],
    call: RecordedCall,
    options: BlameOptions,
    plan: ResolvedBisect,
    run_dir: Path | None,
) -> BudgetExhausted[BlameResult]:
    """The budget's stop of the search, carrying the call's blame so far (``blame.json`` is
    written) instead of the bare search.
    """
    blamed = None if exc.result is None else _blamed(call, options, plan, exc.result, run_dir)
    return BudgetExhausted(str(exc), recorded=exc.recorded, result=blamed)


def _search(
    plan: ResolvedBisect, run_dir: Path | None, fresh: bool, shared: Shared | None
) -> BisectResult:
    """The culprit search, on its own executor or its part of a shared one."""
    if shared is None:
        return run_bisect(plan, run_dir=run_dir, fresh=fresh)
    executor = shared.executor(plan)
    try:
        return run_bisect(plan, run_dir=run_dir, fresh=fresh, executor=executor)
    finally:
        executor.close()


def _blamed(
    call: RecordedCall,
    options: BlameOptions,
    plan: ResolvedBisect,
    result: BisectResult,
    run_dir: Path | None,
) -> BlameResult:
    """``blame.json``'s record of ``result`` (written into ``run_dir``)."""
    record = BlameRecord(
        **result.record.model_dump(),
        call=call.id,
        source=call.source,
        model=model_of(call, options),
        parts=part_records(call, options.parts, plan.settings.suspects),
        expect=options.expect,
        seeds_vary=_seeds_vary(result, plan.base.id),
        replay=_replay(result.record, call.answer),
        rank=RankRecord(
            method="given" if options.suspects else options.rank,
            order=list(result.record.suspects),
            probes=result.record.ranking_probes,
        ),
    )
    if run_dir is not None:
        write_json(run_dir / BLAME_FILE, record.model_dump(mode="json", by_alias=True))
    return BlameResult(record=record, bisect=result)
