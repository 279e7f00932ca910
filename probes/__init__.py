"""What one probe measures: the runner contract, comparators, similarity, per-probe statistics,
the null band, manifest checks and arm declarations.

Pure: no Ray, no file I/O, no logging.
"""

if __name__ != "counterfact.probes":  # one import name per module: see docs/architecture.md
    msg = (
        f"import counterfact.probes, not {__name__!r}: the top-level folder probes/ is the "
        "subpackage counterfact.probes, and a second name would load every module twice"
    )
    raise ImportError(msg)
