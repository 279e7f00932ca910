"""``counterfact plan``: the power of each test and the samples that reach it (paired, unpaired,
sequential, over an eval set), the design the planners share, and the spend and wall-time
estimate ``plan`` and ``validate --smoke`` print.

Import rule (``tests/test_structure.py``): planning builds on the judging modules and
:mod:`counterfact.verdicts.stats`; no judging module imports it.
"""
