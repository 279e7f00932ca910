"""Runners counterfact ships: declared in a sweep file (``runner: {kind: ...}``), no Python."""
