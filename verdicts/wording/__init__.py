"""Words shared by claims and command output (seed lists, durations) and the arm-level verdict's
console line and notes.

Import rule: builds on :mod:`counterfact.verdicts.stats` and the records only; the judging
modules, the bisection and the report read it.
"""
