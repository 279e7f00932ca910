"""Running the viewer on uvicorn, on a socket bound before the server starts (so a port in use
is one clear error, and port 0 tells its real port before the first request).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable

import uvicorn

from counterfact.orchestrator.view.app import build_app
from counterfact.orchestrator.view.catalog import Catalog


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one.

    Raises:
        OSError: the address is in use, or not one of this machine's.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto named: asyncio sets TCP_NODELAY only on accepted sockets whose proto is TCP; with
    # proto 0 every response after a connection's first waited ~40 ms (Nagle + delayed ACK)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://host:port/`` of a bound socket."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(catalog: Catalog, sock: socket.socket, host: str, ready: Callable[[], None]) -> None:
    """Serve until Ctrl-C (or SIGTERM); ``ready`` is called once the server accepts requests."""
    config = uvicorn.Config(
        build_app(catalog, host), log_level="warning", lifespan="off", access_log=False
    )
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.02)
        if server.started:
            ready()
        await task

    asyncio.run(main())
