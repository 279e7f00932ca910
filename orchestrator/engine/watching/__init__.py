"""Watching a sweep: live counts, live.json, the progress line, events."""
