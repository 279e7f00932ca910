"""The model-graded comparator's judge: ``comparator: {kind: judge, model, ...}``.

A :class:`ModelJudge` asks a chat model, through the real ``openai`` client (the chat runner's
:func:`~counterfact.orchestrator.runners.chat.client_for`), whether an output gives the same
answer as the reference — or, with ``rubric``, whether it meets the rubric — with
:data:`DEFAULT_PROMPT` (or :data:`RUBRIC_PROMPT`) unless the config gives its own ``prompt``.
Calls go at temperature 0 with a fixed seed. The reply is read strictly (:func:`parse_reply`):
its first line must be exactly ``SAME`` or ``DIFFERENT`` (or a JSON object
``{"verdict": "SAME"}``); anything else is that seed's failed comparison
(:class:`~counterfact.exceptions.JudgeUnparseable`: unscored and in doubt), never a flip. A
call the judge refused, or left unanswered through its retries, is that seed's failed
comparison too (:class:`~counterfact.exceptions.JudgeUnavailable`), not kept: a resume asks it
again.

Outputs are judged a batch at a time (the tally's scoring batch), concurrently, on an event
loop of a thread of its own (the driver's thread may be inside a loop already); the calls are
paced by the project's rate control
(:class:`~counterfact.orchestrator.engine.judging.judgecalls.JudgeCaller`); a judge of the runner's
own endpoint (:meth:`ModelJudge.same_endpoint`) is paced by the runs' own slots when they
overlap in this process, on their loop, and on Ray by its part of the runs' limit from their
throttle actor (:meth:`ModelJudge.share`). :meth:`ModelJudge.close`
closes the client and stops that loop (the session does, however the sweep ends). Each judgment
is kept by (the judge's settings, the reference, the output): identical outputs cost one call.
With a run directory every call is appended to ``judge.jsonl`` and read back on resume, so a
resume asks nothing already asked. Each call's tokens (and ``usd`` with ``price``) go to the
sweep's spend under ``judge``.

Its noise is measured: a share ``recheck`` of judgments (chosen by a hash of the judge's
settings and the output, so a resume picks the same) is asked a second time with the next seed;
the self-disagreement rate and its Wilson interval go to ``summary.json`` ``judges``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from counterfact.exceptions import ConfigError, JudgeUnavailable, JudgeUnparseable
from counterfact.orchestrator.engine.calling.loops import LoopThread
from counterfact.orchestrator.engine.executors.base import SharedSlots
from counterfact.orchestrator.engine.judging.judgecalls import CALL_TIMEOUT_S, JudgeCaller
from counterfact.orchestrator.engine.judging.judgefile import Judgment, read_line
from counterfact.probes.comparators import Comparator
from counterfact.probes.expected import ExpectedAnswer
from counterfact.probes.judging import JudgeComparator
from counterfact.records.execution import ConcurrencyRecord
from counterfact.records.summary import JudgeRecord

JUDGE_FILE = "judge.jsonl"
"""The run directory's judge cache: one JSON line per call, append-only."""

PROTOCOL = 1
"""The judge request's version, part of its identity: bump it when the same settings would send
a different request (recorded judgments then no longer stand for them)."""

RECHECK = 0.1
"""The default share of judgments asked twice."""

REPLY_CHARS = 200
"""Characters of a reply kept in ``judge.jsonl`` (the first line decides)."""

DEFAULT_PROMPT = """You compare two answers to the same question.

Reference answer:
{reference}

Answer to grade:
{output}

Does the answer to grade give the same final answer as the reference answer? Ignore wording, \
length, explanations and formatting; judge only the answer it commits to.
Reply with exactly one word on the first line: SAME or DIFFERENT."""
"""The judge's prompt without a rubric (``{reference}``, ``{output}``)."""

RUBRIC_PROMPT = """You grade an answer against a rubric.

Rubric:
{rubric}

A reference answer that meets it:
{reference}

Answer to grade:
{output}

Does the answer to grade meet the rubric?
Reply with exactly one word on the first line: SAME if it meets the rubric, DIFFERENT if not."""
"""The judge's prompt with ``rubric`` (``{rubric}``, ``{reference}``, ``{output}``)."""

VERDICTS = {"SAME": True, "DIFFERENT": False}


def parse_reply(text: str) -> bool | None:
    """True for ``SAME``, False for ``DIFFERENT``, None for anything else.

    Read strictly: the first line, stripped, must be exactly ``SAME`` or ``DIFFERENT``, or a
    JSON object whose ``verdict`` is one of them (``{"verdict": "SAME"}``). ``Same.``,
    ``They are the same`` or an empty reply are not verdicts.
    """
    lines = text.strip().splitlines()
    first = lines[0].strip() if lines else ""
    if first in VERDICTS:
        return VERDICTS[first]
    if first.startswith("{"):
        try:
            data = json.loads(first)
        except ValueError:
            return None
        verdict = data.get("verdict") if isinstance(data, dict) else None
        return VERDICTS.get(verdict) if isinstance(verdict, str) else None
    return None


@dataclass(frozen=True)
class JudgeSettings:
    """What makes a judge this judge: its model, endpoint, prompt and seed."""

    model: str
    base_url: str | None
    api_key_env: str
    rubric: str | None
    prompt: str
    """The prompt template, the default filled in."""
    seed: int
    recheck: float
    price: tuple[float, float] | None
    """USD per 1,000 input and output tokens."""
    timeout_s: float = CALL_TIMEOUT_S
    """Seconds one call may take before it is cut off and tried again."""
    max_tokens: int | None = None
    """The reply's token cap sent with each call (None: none sent)."""

    def identity(self) -> str:
        """``judge@sha256:<16 hex>`` of the settings that change a judgment (not the price,
        the recheck share or the call's timeout) and :data:`PROTOCOL`; a reply cap counts
        only when one is set, so judges recorded before it existed keep their identity.
        """
        payload = asdict(self) | {"protocol": PROTOCOL}
        for key in ("price", "recheck", "api_key_env", "timeout_s"):
            del payload[key]
        if self.max_tokens is None:
            del payload["max_tokens"]
        text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return f"judge@sha256:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


Pacing = Literal["runs-slots", "own", "own-beside-runs"]
"""How a judge's calls were paced (``JudgeRecord.pacing``)."""
PACINGS: tuple[Pacing, ...] = ("own-beside-runs", "own", "runs-slots")
"""In the order a session's record names them: apart from the runs' if any batch was."""
Charge = Callable[[dict[str, float], str | None], None]
"""Told one call's cost (``tokens``, and ``usd`` with a price) and the arm it is charged to
(None: not known)."""


class ModelJudge:
    """A :class:`~counterfact.probes.judging.Judge` that asks a chat model."""

    def __init__(self, settings: JudgeSettings) -> None:
        self.settings = settings
        self.identity = settings.identity()
        self._held: dict[tuple[str, int], Judgment] = {}
        self._failed: dict[tuple[str, int], str] = {}
        """Calls the judge refused or left unanswered this session (not kept: a resume asks
        them again), by (key, attempt): why."""
        self._lock = threading.Lock()
        self._loop: LoopThread | None = None
        """The judge's own event loop (one for every batch: its client and connections stay)."""
        self._caller: JudgeCaller | None = None
        """Its calls, paced by their own throttle (made on the first call)."""
        self._path: Path | None = None
        self._charge: Charge | None = None
        self._shared_of: Callable[[], SharedSlots | None] | None = None
        """Where the runs' slots are, when the judge calls the runner's endpoint."""
        self._paced: set[Pacing] = set()
        """How this session's batches were paced (``JudgeRecord.pacing``)."""
        self.calls = 0
        """Calls made by this process (read-back judgments are not calls)."""
        self.read_back = 0
        """Judgments read back from ``judge.jsonl``."""

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a resolved sweep may be shipped): the lock, loop and caller are made anew."""
        state = dict(self.__dict__)
        del state["_lock"]
        state["_loop"] = state["_caller"] = state["_shared_of"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def bind(self, run_dir: Path | None, charge: Charge | None, *, read: bool = True) -> None:
        """Keep judgments in ``run_dir``'s :data:`JUDGE_FILE` (reading back those recorded,
        unless ``read`` is False: ``--fresh`` moves that file aside) and tell ``charge`` every
        call's cost, the recorded ones' too (they are the directory's spend).
        """
        self.close()  # a judge bound again (the next sweep in a notebook) starts anew
        self._caller = None
        self._charge = charge
        self._held.clear()  # what this directory holds, not what another sweep asked
        self._paced.clear()
        self._failed.clear()
        self.calls = self.read_back = 0
        self._path = None if run_dir is None else run_dir / JUDGE_FILE
        if self._path is None or not read or not self._path.is_file():  # a FIFO would block
            return
        for raw in self._path.read_text(encoding="utf-8").splitlines():
            found = read_line(raw, self.identity)
            if found is not None and (found.key, found.attempt) not in self._held:
                self._held[(found.key, found.attempt)] = found
                self.read_back += 1
                self._spend(found)

    def same_endpoint(self, runner: object) -> bool:
        """Whether ``runner`` is a chat runner calling the judge's endpoint with the same key
        (the same account's rate limits): then the judge and the runs share one controller.
        """
        from counterfact.orchestrator.runners.chat import ChatRunner

        if not isinstance(runner, ChatRunner):
            return False  # a Python runner's endpoint is not known

        def url(found: str | None) -> str:
            return (found or "https://api.openai.com/v1").rstrip("/")

        key = os.environ.get(self.settings.api_key_env)
        same_key = key == os.environ.get(runner.api_key_env)
        return url(runner.base_url) == url(self.settings.base_url) and same_key

    def share(self, slots_of: Callable[[], SharedSlots | None] | None) -> None:
        """Pace the calls by the runs' slots ``slots_of`` gives, on their loop, whenever it
        gives some (the runs overlap in this process); None: the judge's own throttle.
        """
        self._shared_of = slots_of

    def key(self, reference: str, output: str) -> str:
        """The judgment's key: its settings, the reference (and rubric) and the output."""
        text = json.dumps([self.identity, reference, output], ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def rechecked(self, key: str) -> bool:
        """Whether this judgment is asked twice: a hash of the key under the share."""
        return int(key[:15], 16) / 16**15 < self.settings.recheck

    def describe(self) -> str:
        """``judged by <model>`` (and its rubric)."""
        rubric = self.settings.rubric
        return f"judged by {self.settings.model}" + (f" against {rubric!r:.60}" if rubric else "")

    def options(self) -> dict[str, Any]:
        """The model, endpoint, rubric and the prompt's identity."""
        s = self.settings
        found: dict[str, Any] = {"model": s.model}
        if s.base_url:
            found["base_url"] = s.base_url
        if s.rubric:
            found["rubric"] = s.rubric
        if s.prompt not in (DEFAULT_PROMPT, RUBRIC_PROMPT):
            found["prompt"] = hashlib.sha256(s.prompt.encode()).hexdigest()[:12]
        return found

    def prepare(
        self, reference: str, outputs: list[str], arms: Sequence[str] | None = None
    ) -> None:
        """Judge every output not yet judged (and the rechecks due), concurrently; each call is
        charged to the arm (``arms``, one per output) of the first output that needs it.

        Raises:
            ScoringError: the judge could not be asked at all (unreachable, key rejected or
                missing, unknown model, out of credit).
        """
        todo: dict[tuple[str, int], tuple[str, str | None]] = {}
        owners = list(arms) if arms is not None else [None] * len(outputs)
        for output, arm in zip(outputs, owners, strict=True):
            key = self.key(reference, output)
            for attempt in (0, 1) if self.rechecked(key) else (0,):
                known = (key, attempt) in self._held or (key, attempt) in self._failed
                if not known and (key, attempt) not in todo:
                    todo[(key, attempt)] = (output, arm)
        if not todo:
            return
        if self._caller is None:
            s = self.settings
            self._caller = JudgeCaller(
                s.model, s.base_url, s.api_key_env, timeout_s=s.timeout_s, max_tokens=s.max_tokens
            )
        shared = self._caller.shared = self._shared_of() if self._shared_of else None
        beside = self._shared_of is not None  # the runs' endpoint, their slots not here
        self._paced.add("runs-slots" if shared else "own-beside-runs" if beside else "own")
        if shared is not None:  # on the runs' loop, through their slots
            asked = shared.loop.submit(self._ask_all(self._caller, reference, todo))
            try:
                asked.result()
            except BaseException:
                asked.cancel()  # Ctrl-C while waiting: the calls stop with the wait
                raise
            return
        if self._loop is None or not self._loop.alive:
            self._loop = LoopThread(name="counterfact-judge")
        self._loop.run(self._ask_all(self._caller, reference, todo))

    def same(self, reference: str, output: str) -> bool:
        """The judgment of ``output`` (asked now when no batch asked it).

        Raises:
            JudgeUnparseable: the judge's reply was not a verdict.
            JudgeUnavailable: the judge refused it, or gave no answer through its retries.
        """
        key = self.key(reference, output)
        if (key, 0) not in self._held and (key, 0) not in self._failed:
            self.prepare(reference, [output])
        why = self._failed.get((key, 0))
        if why is not None:
            raise JudgeUnavailable(why)
        found = self._held[(key, 0)]
        if found.same is None:
            msg = (
                f"the judge {self.settings.model} replied {found.reply[:80]!r}, which is not a "
                "verdict (its first line must be exactly SAME or DIFFERENT), so that output is "
                "unscored; make comparator.prompt ask for that, or use another judge model"
            )
            raise JudgeUnparseable(msg)
        return found.same

    async def _ask_all(
        self,
        caller: JudgeCaller,
        reference: str,
        todo: dict[tuple[str, int], tuple[str, str | None]],
    ) -> None:
        s = self.settings

        async def one(key: str, attempt: int, output: str, arm: str | None) -> None:
            prompt = s.prompt.format(reference=reference, output=output, rubric=s.rubric or "")
            try:
                reply = await caller.ask(prompt, s.seed + attempt)
            except JudgeUnavailable as exc:
                self._failed[(key, attempt)] = str(exc)
                return
            self._keep(
                Judgment(
                    key=key,
                    attempt=attempt,
                    same=parse_reply(reply.text),
                    reply=reply.text[:REPLY_CHARS],
                    input_tokens=reply.input_tokens,
                    output_tokens=reply.output_tokens,
                    arm=arm,
                )
            )

        tasks = [one(key, attempt, *asked) for (key, attempt), asked in todo.items()]
        failed = [r for r in await asyncio.gather(*tasks, return_exceptions=True) if r is not None]
        if failed:
            raise failed[0]

    def close(self) -> None:
        """Cancel what is left of its calls, close its client (its connections) and stop its
        event loop; a later batch opens them anew. Safe to call twice, and from a ``finally``.
        """
        loop, caller = self._loop, self._caller
        self._loop = self._shared_of = None
        if loop is None or not loop.alive:
            return

        async def shut() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if caller is not None:
                await caller.aclose()

        with contextlib.suppress(Exception):  # closing must not hide why the sweep ended
            loop.submit(shut()).result(timeout=10)
        loop.stop()

    def _keep(self, found: Judgment) -> None:
        with self._lock:
            self._held[(found.key, found.attempt)] = found
            self.calls += 1
            if self._path is not None:
                with self._path.open("a", encoding="utf-8") as out:
                    out.write(found.line(self.identity) + "\n")
            self._spend(found)

    def _spend(self, found: Judgment) -> None:
        if self._charge is not None:
            self._charge(self.cost(found), found.arm)

    def cost(self, found: Judgment) -> dict[str, float]:
        """One call's ``tokens`` (and ``usd`` with a price)."""
        cost = {"calls": 1.0, "tokens": float(found.input_tokens + found.output_tokens)}
        price = self.settings.price
        if price is not None:
            usd = found.input_tokens * price[0] + found.output_tokens * price[1]
            cost["usd"] = usd / 1000.0
        return cost

    def record(self) -> JudgeRecord:
        """What the judge did and how often it disagreed with itself (Wilson interval, 95%)."""
        from scipy.stats import binomtest

        held, caller = dict(self._held), self._caller
        pairs = [
            (first.same, again.same)
            for (key, attempt), first in held.items()
            if attempt == 0 and (again := held.get((key, 1))) is not None
        ]
        scored = [(a, b) for a, b in pairs if a is not None and b is not None]
        disagreed = sum(a != b for a, b in scored)
        low = high = rate = None
        if scored:
            rate = disagreed / len(scored)
            ci = binomtest(disagreed, len(scored)).proportion_ci(
                confidence_level=0.95, method="wilson"
            )
            low, high = float(ci.low), float(ci.high)
        return JudgeRecord(
            model=self.settings.model,
            identity=self.identity,
            judgments=sum(attempt == 0 for _, attempt in held),
            calls=self.calls,
            read_back=self.read_back,
            not_verdicts=sum(j.same is None for j in held.values()),
            recheck=self.settings.recheck,
            rechecked=len(scored),
            disagreed=disagreed,
            disagreement=rate,
            low=low,
            high=high,
            unavailable=len(self._failed),
            rate_limited=0 if caller is None else caller.rate_limited,
            concurrency=None
            if caller is None
            or not self.calls + len(self._failed)
            or (moved := caller.controller.summary()) is None
            else ConcurrencyRecord.model_validate(moved),
            pacing=self._pacing(),
        )

    def _pacing(self) -> Pacing | None:
        """How this session's calls were paced: apart from the runs' if any batch was."""
        if not self.calls + len(self._failed):
            return None
        return next((how for how in PACINGS if how in self._paced), None)


def judges_of(checks: Iterable[Comparator]) -> list[ModelJudge]:
    """The distinct model judges among ``checks`` (the sweep's questions' checks), in order."""
    found: dict[int, ModelJudge] = {}
    for check in checks:
        while isinstance(check, ExpectedAnswer):  # blame --expect: the judge inside it
            check = check.inner
        judge = getattr(check, "judge", None) if isinstance(check, JudgeComparator) else None
        if isinstance(judge, ModelJudge):
            found.setdefault(id(judge), judge)
    return list(found.values())


def build_judge(config: Any, section: str = "comparator") -> ModelJudge:
    """The judge a ``comparator: {kind: judge, ...}`` section describes (nothing is called).

    Raises:
        ConfigError: the API key's environment variable is not set.
    """
    key_env = config.api_key_env or "OPENAI_API_KEY"
    if not os.environ.get(key_env):
        msg = (
            f"the judge's API key variable {key_env} is not set; set it (any text, e.g. "
            "'none', for a server that takes no key) or name another with api_key_env"
        )
        raise ConfigError(msg, field=f"{section}.api_key_env")
    rubric = config.rubric
    prompt = config.prompt or (RUBRIC_PROMPT if rubric else DEFAULT_PROMPT)
    price = config.price
    settings = JudgeSettings(
        model=config.model,
        base_url=config.base_url or os.environ.get("OPENAI_BASE_URL") or None,
        api_key_env=key_env,
        rubric=rubric,
        prompt=prompt,
        seed=config.seed if config.seed is not None else 0,
        recheck=float(config.recheck if config.recheck is not None else RECHECK),
        price=None if price is None else (float(price.input_per_1k), float(price.output_per_1k)),
        timeout_s=float(config.timeout_s if config.timeout_s is not None else CALL_TIMEOUT_S),
        max_tokens=config.max_tokens,
    )
    return ModelJudge(settings)
