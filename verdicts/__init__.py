"""What the evidence licenses: verdict tiers and reason codes, intervals, verdict records, reports.

Pure: arrays and models in, results out.
"""

if __name__ != "counterfact.verdicts":  # one import name per module: see docs/architecture.md
    msg = (
        f"import counterfact.verdicts, not {__name__!r}: the top-level folder verdicts/ is the "
        "subpackage counterfact.verdicts, and a second name would load every module twice"
    )
    raise ImportError(msg)
