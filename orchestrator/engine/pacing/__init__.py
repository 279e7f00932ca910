"""Pacing: the throttle, worker allowances, rate-limit replies, budget, spend."""
