"""What the evidence licenses: verdict tiers and reason codes, intervals, verdict records, reports.

Pure: arrays and models in, results out. The judging modules sit directly here; the statistics
kernels in :mod:`counterfact.verdicts.stats`, ``counterfact plan`` in
:mod:`counterfact.verdicts.planning`, the report's rendering in :mod:`counterfact.verdicts.report`,
the culprit search in :mod:`counterfact.verdicts.bisect` and shared words in
:mod:`counterfact.verdicts.wording` (docs/architecture.md, "The rooms of verdicts").
"""

if __name__ != "counterfact.verdicts":  # one import name per module: see docs/architecture.md
    msg = (
        f"import counterfact.verdicts, not {__name__!r}: the top-level folder verdicts/ is the "
        "subpackage counterfact.verdicts, and a second name would load every module twice"
    )
    raise ImportError(msg)
