"""Culprit bisection (rule 10): the ddmin search, its fresh-seed 1-minimality check, whether a
``decide: test`` search can reach alpha, and its claims in words.

Import rule: builds on :mod:`counterfact.verdicts.stats`, :mod:`counterfact.verdicts.applied` and
:mod:`counterfact.verdicts.wording`; never on the report or planning subpackages.
"""
