"""Storage: the run directory, its run log, the run cache, fingerprints and atomic writes.

Storage knows records and files only; it imports neither the configuration nor the engine nor
the CLI.
"""
