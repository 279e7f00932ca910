"""What the evidence licenses: verdict tiers and reason codes, intervals, verdict records, reports.

Pure: arrays and models in, results out.
"""
