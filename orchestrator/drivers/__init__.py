"""The drivers (sweep, bisect, the Python API): the only modules that see every group."""
