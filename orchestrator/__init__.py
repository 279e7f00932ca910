"""How runs happen: config loading, the plan, executors, the run store, drivers, CLI, logging."""
