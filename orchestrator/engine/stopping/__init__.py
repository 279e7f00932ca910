"""Stopping a sweep: Ctrl-C and stop signals; a runner that always fails."""
