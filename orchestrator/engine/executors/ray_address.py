"""Start or join Ray predictably.

- No address: always a *fresh* local instance (``ray.init(address="local")``), never a cluster
  another process left behind. A plain ``ray.init()`` joins whatever address
  ``<RAY_TMPDIR or /tmp>/ray/ray_current_cluster`` names, and a dead one there made sweeps hang
  for minutes on Ray's connection retries.
- ``auto`` or ``host:port``: the address is resolved (``RAY_ADDRESS``, then that file) and its
  GCS port must accept a TCP connection within ``connect_timeout_s`` before Ray is asked to
  join; otherwise one error names the address and the likely fix. ``ray://`` client addresses are
  passed to Ray as they are.
- No address but ``RAY_ADDRESS`` set in the environment: that address is joined, as above (Ray's
  own convention, and what the executor choice announces: ``executor: ray (address: RAY_ADDRESS
  ...)``); an address that does not answer is one error naming ``RAY_ADDRESS`` and how to unset
  it. A sweep that said it joined a cluster and then started a local instance was issue 45.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from counterfact.defaults import JOIN_TIMEOUT_S
from counterfact.exceptions import ExecutorError

CONNECT_TIMEOUT_S = 10.0
ENV = "RAY_ADDRESS"
DROP_ADDRESS = "drop --address to start a local instance"
"""The fix that ends an error about ``--address`` (or ``executor.address``)."""
DROP_ENV = (
    f"or unset {ENV} ('unset {ENV}') to start a local Ray instance, or run in-process with "
    "--executor local"
)
"""The fix that ends an error about an address taken from ``RAY_ADDRESS``."""


def env_address() -> str | None:
    """``RAY_ADDRESS`` when set (not blank), else None."""
    value = os.environ.get(ENV, "").strip()
    return value or None


JOIN_THREAD = "counterfact-ray-join"
"""The name of the thread a bounded join runs on (the CLI does not finalize under one left
retrying)."""


def join_bounded(
    join: Callable[[], object],
    address: str,
    timeout_s: float = JOIN_TIMEOUT_S,
    *,
    from_env: bool = False,
) -> None:
    """Call ``join`` (``ray.init(address=...)``) on a daemon thread and wait ``timeout_s``.

    Raises:
        ExecutorError: the join did not finish in time (the message names the address), or it
            failed (with Ray's reason and the likely fix, :func:`join_error`).
    """
    done = threading.Event()
    failure: list[BaseException] = []

    def attempt() -> None:
        try:
            join()
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=attempt, name=JOIN_THREAD, daemon=True).start()
    if not done.wait(timeout_s):
        msg = (
            f"could not join the Ray cluster at {address!r} within {timeout_s:g} s: the port "
            "accepts connections but no Ray cluster answered there (another service, or a "
            "cluster still starting). Check the address ('ray status' on the head prints it; "
            f"the GCS port is 6379 by default), {_drop(from_env)}; "
            f"for a busy head on a slow network, raise executor.join_timeout_s (now {timeout_s:g})"
        )
        if os.environ.get("RAY_AUTH_MODE", "").lower() != "token":
            msg += f". If it is a Ray cluster, it may refuse joins without a token{TOKEN_HINT}"
        raise ExecutorError(msg)
    if failure:
        raise join_error(address, failure[0], from_env=from_env) from failure[0]


def _drop(from_env: bool) -> str:
    return DROP_ENV if from_env else "or drop --address to run on a local instance"


def cluster_file() -> Path:
    """Where ``ray start`` records the address of the cluster it started on this machine."""
    return Path(os.environ.get("RAY_TMPDIR", "/tmp")) / "ray" / "ray_current_cluster"


def resolve_address(address: str) -> str:
    """``host:port`` of the cluster ``address`` means (``auto``: ``RAY_ADDRESS``, then the file).

    Raises:
        ExecutorError: ``auto`` finds no cluster.
    """
    if address != "auto":
        return address
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env and env != "auto":
        return env
    path = cluster_file()
    text = path.read_text(encoding="utf-8").strip() if path.is_file() else ""
    if not text:
        msg = (
            f"--address auto found no running Ray cluster (RAY_ADDRESS is unset and {path} does "
            "not exist); start one with 'ray start --head', pass its host:port, or drop "
            "--address to run on a local Ray instance started for the sweep"
        )
        raise ExecutorError(msg)
    return text.splitlines()[0]


def check_reachable(
    address: str, timeout_s: float = CONNECT_TIMEOUT_S, *, from_env: bool = False
) -> str:
    """Resolve ``address`` (``from_env``: the value of ``RAY_ADDRESS``) and check its GCS port
    answers; return ``host:port``.

    Raises:
        ExecutorError: no cluster listens there (the message names the address and the fix).
    """
    resolved = resolve_address(address)
    if resolved.startswith("ray://"):
        return resolved
    host, _, port = resolved.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s):
            pass
    except (OSError, ValueError) as exc:
        origin = f"{ENV}={address!r}" if from_env else repr(address)
        via = f" (from {origin})" if from_env or resolved != address else ""
        fix = (
            f"start that cluster, fix {ENV}, {DROP_ENV}"
            if from_env
            else "A cluster that was stopped or crashed can leave its address behind in "
            f"{cluster_file()}: run 'ray stop', pass the right host:port, or {DROP_ADDRESS}"
        )
        msg = (
            f"cannot reach a Ray cluster at {resolved}{via} within {timeout_s:g} s: "
            f"{type(exc).__name__}: {exc}. Is it running ('ray status')? {fix}"
        )
        raise ExecutorError(msg) from exc
    return resolved


TOKEN_HINT = (
    " (Ray >= 2.59 turns token authentication on for clusters started with 'ray start'): set "
    "RAY_AUTH_MODE=token and give the cluster's token via RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH "
    "('ray get-auth-token' on the head prints it)"
)


def join_error(address: str, exc: BaseException, *, from_env: bool = False) -> ExecutorError:
    """Ray's refusal to join, with the likely fix (token authentication above all)."""
    text = f"{type(exc).__name__}: {exc}"
    chain, cause = [text], exc.__cause__ or exc.__context__
    while cause is not None and len(chain) < 5:  # Ray wraps the AuthenticationError it got
        chain.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__ or cause.__context__
    hint = ""
    if any(w in " ".join(chain).lower() for w in ("authenticat", "auth_token", "invalidauth")):
        hint = f". The cluster uses token authentication{TOKEN_HINT}"
    where = f"{address!r} (from {ENV})" if from_env else repr(address)
    fix = f"; fix {ENV}, {DROP_ENV}" if from_env else ""
    return ExecutorError(f"could not join the Ray cluster at {where}: {text[:400]}{hint}{fix}")
