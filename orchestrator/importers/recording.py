"""Running the recording proxy on uvicorn, bound to 127.0.0.1 only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import uvicorn

from counterfact.orchestrator.importers.recorder import Recorder, build_app
from counterfact.orchestrator.view.server import bind, url_of


def serve_recorder(upstream: str, out: Path, port: int, ready: Callable[[str, Path], None]) -> None:
    """Serve until Ctrl-C; ``ready(url, out)`` once the socket is bound.

    Raises:
        OSError: the port is in use.
    """
    sock = bind("127.0.0.1", port)
    out.mkdir(parents=True, exist_ok=True)
    app = build_app(Recorder(out=out, upstream=upstream))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    ready(url_of(sock), out)
    server.run(sockets=[sock])
