"""``counterfact record --upstream URL --out DIR``: a local proxy that saves every chat call an
agent makes, one JSON file each, for ``counterfact blame``.
"""

from __future__ import annotations

from pathlib import Path

import click

from counterfact.exceptions import ConfigError
from counterfact.orchestrator.cli.common import fail


@click.command(name="record")
@click.option(
    "--upstream",
    required=True,
    help="The API the calls go on to, e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1.",
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for calls.")
@click.option("--port", type=click.IntRange(0, 65535), default=8788, show_default=True)
def record(upstream: str, out: str, port: int) -> None:
    """Serve a recording proxy of the OpenAI chat-completions API on 127.0.0.1:PORT: point an
    agent at it (OPENAI_BASE_URL=http://127.0.0.1:PORT/v1) and each call it makes is saved in
    OUT as 000001.json, 000002.json ... (request, response, timing; keys never written).
    Ctrl-C stops it.
    """
    try:
        from counterfact.orchestrator.importers.recording import serve_recorder
    except ImportError as exc:
        fail(
            ConfigError(
                f"the proxy needs starlette and uvicorn ({exc.name} is missing): "
                "pip install 'counterfact[record]'",
                field="record",
            )
        )
        return
    if not upstream.startswith(("http://", "https://")):
        fail(ConfigError(f"{upstream!r} is not an http(s) URL", field="--upstream"))
    folder = Path(out)
    if folder.exists() and any(folder.glob("*.json")):
        msg = f"{folder} already holds recorded calls; record into a new folder"
        fail(ConfigError(msg, field="--out"))
    try:
        serve_recorder(upstream, folder, port, ready=_ready)
    except OSError as exc:
        fail(
            ConfigError(
                f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); pick another --port",
                field="--port",
            )
        )


def _ready(url: str, folder: Path) -> None:
    click.echo(f"recording chat calls into {folder}/; point your agent at OPENAI_BASE_URL={url}v1")
    click.echo("Ctrl-C stops it; then: counterfact blame " + str(folder))
