"""A chat sweep checked before any run: key, model, facets and every template over every
scenario. Each problem is a :class:`~counterfact.ConfigError` naming its field and the fix.
"""

from __future__ import annotations

import difflib
import importlib.util
import inspect
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.config.chatparts_check import check_parts
from counterfact.orchestrator.runners.chat import ChatRunner
from counterfact.orchestrator.runners.chatconfig import RUNNER_ONLY, ChatRunnerConfig
from counterfact.orchestrator.runners.chatplan import ChatPlan, plan_for
from counterfact.orchestrator.runners.templates import render, template_fields
from counterfact.probes.arms import ArmSpec, nest_facets
from counterfact.probes.scenarios import ScenarioSpec

_SHOWN_INPUTS = 12
"""How many of a scenario's input names an error lists."""
SERVER_EXTRAS = frozenset(
    {
        *("top_k", "min_p", "repetition_penalty", "length_penalty", "min_tokens", "best_of"),
        *("stop_token_ids", "skip_special_tokens", "ignore_eos", "include_stop_str_in_output"),
        *("guided_json", "guided_regex", "guided_choice", "guided_grammar", "use_beam_search"),
        *("chat_template_kwargs", "options", "keep_alive"),
    }
)
"""Request fields vLLM (its sampling extras) and Ollama (``options``, ``keep_alive``) take
beyond the ones the ``openai`` client defines."""


@dataclass(frozen=True)
class ChatChecked:
    """The runner to ship, and notes on what looks off but is allowed."""

    runner: ChatRunner
    notes: tuple[str, ...] = ()


def check_chat(
    config: ChatRunnerConfig,
    arms: Sequence[ArmSpec],
    origins: Sequence[str],
    scenarios: Sequence[ScenarioSpec],
    *,
    paired: bool = True,
    environ: Mapping[str, str] | None = None,
) -> ChatChecked:
    """The :class:`ChatRunner` for this sweep, once everything it will send has been checked.

    Args:
        config: the ``runner:`` section.
        arms: every arm of the sweep.
        origins: where each arm was declared (``arms[1]``, ``grid[0]``), for error fields.
        scenarios: every scenario (their ``inputs`` fill the templates).
        paired: the test pairs runs by seed (``statistics.pairing: seed``).
        environ: where the API key and ``OPENAI_BASE_URL`` are read (default ``os.environ``).

    Raises:
        ConfigError: the ``openai`` package is missing, the key's variable is not set, an arm
            restores, ablates a part the request does not have, sets a runner-only key or a
            malformed template facet, has no model, or a template names an input some
            scenario lacks (or cannot be filled from it).
    """
    env = os.environ if environ is None else environ
    if importlib.util.find_spec("openai") is None:
        msg = (
            "the chat runner calls the API through the openai package; "
            "pip install 'counterfact[openai]'"
        )
        raise ConfigError(msg, field="runner.kind")
    if not env.get(config.api_key_env, ""):
        msg = (
            f"environment variable {config.api_key_env} is not set; the chat runner sends it as "
            f"the API key. Export it (any text, e.g. {config.api_key_env}=none, for a server "
            "that takes no key such as vLLM or Ollama), or name another with runner.api_key_env"
        )
        raise ConfigError(msg, field="runner.api_key_env")
    templates: dict[str, str] = {}
    fields = {f"runner.request.{key}": key for key in config.request}
    plans = [_arm_plan(config, arm, origin) for arm, origin in zip(arms, origins, strict=True)]
    for arm, origin, plan in zip(arms, origins, plans, strict=True):
        for key in nest_facets(arm.facets):
            fields.setdefault(f"{origin} (arm {arm.id!r}) facet {key!r}", key)
        for key, text in plan.templates():
            declared = key.split("[", 1)[0] in plan.declared
            templates.setdefault(text, f"{origin}.facets.{key}" if declared else f"runner.{key}")
    _fit(templates, scenarios)
    check_parts(plans, arms, origins, scenarios)
    base_url = config.base_url or env.get("OPENAI_BASE_URL") or None
    if base_url is not None:
        where = "runner.base_url" if config.base_url else "OPENAI_BASE_URL"
        problem = url_problem(base_url)
        if problem is not None:
            raise ConfigError(problem, field=where)
    notes = _unknown_fields(fields)
    if paired and not config.send_seed:
        notes += (
            "runner.send_seed is false: the API is not told the seed, so the runs a paired test "
            "pairs share only a seed index; declare statistics.pairing: none",
        )
    return ChatChecked(ChatRunner(config, base_url), notes)


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be an API endpoint (an http or https URL with a host), or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (
            f"{url!r} is not an http(s) URL with a host; write e.g. http://127.0.0.1:8000/v1 "
            "(vLLM) or https://api.openai.com/v1"
        )
    return None


def _unknown_fields(fields: Mapping[str, str]) -> tuple[str, ...]:
    """A note per request field no API here defines (a typo such as ``sytem`` is sent as a
    field the server may ignore, and the arm would change nothing), with the closest name.
    """
    from openai.resources.chat.completions import AsyncCompletions

    params = inspect.signature(AsyncCompletions.create).parameters
    known = {p for p in params if p not in ("self", "timeout") and not p.startswith("extra_")}
    known |= SERVER_EXTRAS | {"system", "prompt"}
    notes: list[str] = []
    seen: set[str] = set()
    for where, key in fields.items():
        if key in known or key in seen:
            continue
        seen.add(key)
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        notes.append(
            f"{where} is sent as request field {key!r}, which neither OpenAI's chat API nor "
            f"vLLM or Ollama define{hint}; a server may ignore it, and then it changes nothing"
        )
    return tuple(notes)


def _arm_plan(config: ChatRunnerConfig, arm: ArmSpec, origin: str) -> ChatPlan:
    """The arm's request, refused when the chat runner could not send it as declared."""
    facets = nest_facets(arm.facets)
    for key in facets:
        if key in RUNNER_ONLY or key == "seed" or key == "stream":
            msg = (
                f"arm {arm.id!r} sets facet {key!r}, which an arm cannot vary in a chat sweep "
                f"({_runner_only(key)}); remove it from the arm"
            )
            raise ConfigError(msg, field=f"{origin}.facets.{key}")
    try:
        plan = plan_for(config, facets)
    except ValueError as exc:
        raise ConfigError(f"arm {arm.id!r}: {exc}", field=f"{origin}.facets") from exc
    if plan.call is not None:
        return plan  # the recorded request's model and messages: checked per scenario
    if plan.model is None:
        msg = (
            f"arm {arm.id!r} asks for no model; set runner.model (e.g. gpt-4o-mini, or the name "
            "your vLLM or Ollama server serves), or give the arm a model facet"
        )
        raise ConfigError(msg, field="runner.model")
    if not plan.templates():
        msg = f"arm {arm.id!r} sends no message; keep a prompt or some messages"
        raise ConfigError(msg, field=f"{origin}.facets")
    return plan


def _runner_only(key: str) -> str:
    if key == "seed":
        return "each run's seed is sent as the request's seed"
    if key == "stream":
        return "the runner reads one whole reply per run"
    return "a setting of the runner itself, the same for every arm"


def _fit(templates: Mapping[str, str], scenarios: Sequence[ScenarioSpec]) -> None:
    """Every template names only inputs every scenario has, and fills from each of them."""
    for text, where in templates.items():
        names = template_fields(text)
        checked: set[frozenset[str]] = set()
        for sc in scenarios:
            keys = frozenset(sc.inputs)
            if keys not in checked:  # an eval set's rows usually share one set of inputs
                missing = [n for n in names if n not in keys]
                if missing:
                    raise ConfigError(_missing(missing[0], sc), field=where)
                checked.add(keys)
            if names:
                _fills(text, where, sc)


def _missing(name: str, sc: ScenarioSpec) -> str:
    have = sorted(sc.inputs)
    shown = ", ".join(have[:_SHOWN_INPUTS]) + (" ..." if len(have) > _SHOWN_INPUTS else "")
    available = f"its inputs are: {shown}" if have else "it has no inputs"
    return (
        f"the template names {{{name}}}, which scenario {sc.id!r} does not have; {available}. "
        f"add '{name}' to every scenario's inputs, or fix the template"
    )


def _fills(text: str, where: str, sc: ScenarioSpec) -> None:
    try:
        render(text, sc.inputs)
    except (KeyError, IndexError, AttributeError, ValueError, TypeError) as exc:
        msg = (
            f"the template cannot be filled from scenario {sc.id!r}'s inputs "
            f"({type(exc).__name__}: {exc}); fix the field or its format"
        )
        raise ConfigError(msg, field=where) from exc
