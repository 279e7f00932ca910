"""The statistics kernels: intervals, the fixed-sample tests, multiplicity, the pooled and
clustered effects, the sequential e-process and its futility test, and the settings they read.

Import rule (``tests/test_structure.py``): of counterfact, these modules import only
:mod:`counterfact.records`, :mod:`counterfact.defaults`, :mod:`counterfact.probes.pairs` (the
seed pairs the paired tests read) and each other; never another verdicts module or subpackage.
"""
