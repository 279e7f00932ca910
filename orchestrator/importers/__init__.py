"""Runs made elsewhere, judged here: importers that turn another harness's logs into an
ordinary run directory (runs, verdicts, tests, pooled results, report).
"""
