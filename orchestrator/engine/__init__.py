"""The engine: plan, worker, run source, executors, progress, Ctrl-C, user-code loading."""
