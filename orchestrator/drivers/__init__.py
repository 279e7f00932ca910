"""The run drivers (sweep, bisect, the Python API); outputs and the gate in rooms."""
