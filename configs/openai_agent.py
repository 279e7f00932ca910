"""An API-bound runner: one chat completion per run through the real ``openai`` client.

The same file runs against any OpenAI-compatible endpoint, chosen by environment variables:

- ``OPENAI_BASE_URL``: the endpoint (a hosted API, vLLM's ``http://host:8000/v1``, Ollama's
  ``http://localhost:11434/v1``, or the test suite's loopback stand-in);
- ``OPENAI_API_KEY``: its key (any text for servers that take none);
- ``COUNTERFACT_USD_PER_1K_TOKENS``: the price used for the ``usd`` cost (default 0.0006).

The arm's ``model`` and ``temperature`` facets choose the request; the manifest reports every
facet the arms declare: the model the API says it ran, so a silent fallback to another model
shows as a manifest mismatch, and the temperature the request set (the API does not echo it). A
declared facet left out of the manifest could not be checked and would withhold every verdict
(``arm-facet-not-reported``). The
client's own retries are off (``max_retries=0``): counterfact waits out a 429's
``Retry-After`` itself, lowers the sweep's concurrency, and never counts the run as failed.

Needs ``pip install 'counterfact[openai]'``.
"""

from __future__ import annotations

import os
from functools import cache

from openai import AsyncOpenAI

from counterfact import RunContext, RunResult


@cache
def client() -> AsyncOpenAI:
    """One client per worker process (its connection pool serves every run there)."""
    return AsyncOpenAI(
        base_url=os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("OPENAI_API_KEY", "none"),
        max_retries=0,
        timeout=120.0,
    )


async def run(ctx: RunContext) -> RunResult:
    facets = ctx.arm.facets
    model = str(facets.get("model", "gpt-4o-mini"))
    temperature = float(facets.get("temperature", 0.7))
    reply = await client().chat.completions.create(
        model=model,
        temperature=temperature,
        seed=ctx.seed,
        messages=[
            {"role": "system", "content": "Answer with one word."},
            {"role": "user", "content": str(ctx.scenario.inputs["question"])},
        ],
    )
    tokens = float(reply.usage.total_tokens) if reply.usage is not None else 0.0
    price = float(os.environ.get("COUNTERFACT_USD_PER_1K_TOKENS", "0.0006"))
    return RunResult(
        output=reply.choices[0].message.content or "",
        manifest={"model": reply.model, "temperature": temperature},
        cost={"tokens": tokens, "usd": tokens * price / 1000.0},
    )
