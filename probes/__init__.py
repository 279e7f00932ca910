"""What one probe measures: the runner contract, comparators, similarity, per-probe statistics,
the null band, manifest checks and arm declarations.

Pure: no Ray, no file I/O, no logging.
"""
