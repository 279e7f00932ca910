"""Calling runners: a run called and checked, its event loop, guard and watch."""
