"""What the process loads and holds: user code, embedders, the heap."""
