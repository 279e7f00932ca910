"""The viewer's listening socket: accepted connections send each response at once."""

from __future__ import annotations

import asyncio
import socket

from counterfact.orchestrator.view.server import bind


def test_accepted_connections_have_nodelay() -> None:
    """asyncio sets TCP_NODELAY only when the listening socket's proto is TCP; without it a
    kept-alive browser or client waited ~40 ms on every response after the first (Nagle's
    algorithm holding the body until the client's delayed ACK of the headers)."""
    sock = bind("127.0.0.1", 0)
    assert sock.proto == socket.IPPROTO_TCP

    async def accept_one() -> list[int]:
        seen: list[int] = []

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            seen.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        reader, writer = await asyncio.open_connection(*sock.getsockname()[:2])
        await reader.read()
        writer.close()
        server.close()
        await server.wait_closed()
        return seen

    assert [bool(v) for v in asyncio.run(accept_one())] == [True]
