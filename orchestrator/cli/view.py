"""``counterfact view PATH``: a local, read-only web viewer over a run directory or a folder of
them (needs the ``view`` extra: starlette and uvicorn).
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from urllib.parse import urlencode

import click

EXTRA_MISSING = (
    "error: counterfact view needs starlette and uvicorn: pip install 'counterfact[view]'"
)


DEFAULT_PORT = 8377
"""``--port``'s default: not 8765, 8000, 8080 or 11434, which local model servers take (a
viewer started beside one must not fail on the port, nor be mistaken for it)."""


@click.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but loopback lets other machines read the records "
    "(there is no login): it is allowed, with a warning.",
)
@click.option(
    "--port",
    default=DEFAULT_PORT,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on; 0 picks a free one.",
)
@click.option(
    "--compare",
    "other",
    metavar="OTHER",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A second run directory (or folder of them), served beside PATH for the comparison "
    "page: OTHER is 'before' (e.g. main), PATH 'after' (e.g. the pull request).",
)
def view(path: Path, host: str, port: int, other: Path | None) -> None:
    """Serve a read-only web viewer over PATH (a run directory or a folder of them): the
    sweeps and their verdicts, a running sweep's live state, each arm's questions with the
    baseline's and the arm's outputs side by side, and two directories compared.
    """
    try:
        from counterfact.orchestrator.view.catalog import Catalog
        from counterfact.orchestrator.view.server import bind, is_loopback, serve, url_of
    except ImportError:
        click.echo(EXTRA_MISSING, err=True)
        sys.exit(2)
    if not is_loopback(host):
        click.echo(
            f"warning: --host {host} is not a loopback address: anyone who can reach this "
            "machine can read these records (the viewer has no login)",
            err=True,
        )
    try:
        sock = bind(host, port)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        msg = f"cannot listen on {host}:{port}: {reason}; pass another --port (0: a free one)"
        click.echo(f"error: --host/--port: {msg}", err=True)
        sys.exit(2)
    catalog = Catalog(path, other)
    url = url_of(sock)
    if not catalog.runs():
        click.echo(f"note: no run directory in {path} yet; the list fills in as sweeps write")
    pair = catalog.first_pair()

    def ready() -> None:
        click.echo(f"counterfact view: {path} at {url} (read-only; Ctrl-C stops)")
        if pair is not None:
            click.echo(f"compare: {url}compare?{urlencode({'a': pair[0], 'b': pair[1]})}")
        sys.stdout.flush()

    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a viewer is stopped
        serve(catalog, sock, host, ready)
