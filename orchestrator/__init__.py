"""How runs happen: configuration, the engine and its executors, storage, the drivers and the CLI.

Subpackages, by job (see ``docs/architecture.md`` for the arrows between them):

- ``config``: the sweep file's schema, file loading, ``--set`` overrides, arm expansion,
  resolution (every refusal before any run), target parsing.
- ``engine``: the plan, the worker, where each run's record comes from (``source``), the
  executors (in-process, Ray), progress, Ctrl-C, user-code loading, event routing.
- ``storage``: the run directory and its lock, ``runs.jsonl``, the run cache, fingerprints,
  atomic writes. Knows records and files only.
- ``drivers``: ``sweep``, ``bisect`` and the Python ``api``, the only modules that see every
  group; ``provenance`` builds what every record says about where it came from.
- ``cli``: the ``counterfact`` command, a thin layer over the drivers.
- ``view``: ``counterfact view``, the read-only web viewer over run directories (records only).
"""

if __name__ != "counterfact.orchestrator":  # one import name per module: see docs/architecture.md
    msg = (
        f"import counterfact.orchestrator, not {__name__!r}: the top-level folder orchestrator/ "
        "is the subpackage counterfact.orchestrator, and a second name would load every module "
        "twice"
    )
    raise ImportError(msg)
