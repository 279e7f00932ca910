"""Outputs beside the records: exports, report.html, JSON Schemas."""
