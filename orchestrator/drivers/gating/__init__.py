"""The CI gate (--fail-on): the states a job fails on, read back."""
