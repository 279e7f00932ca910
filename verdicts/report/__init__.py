"""The report's rendering: ``report.html`` (its data, sections, detail table and figures) and
the verdict table printed after a sweep. Records in, text out.

Import rule (``tests/test_structure.py``): the report reads what judging decided; no judging
module imports it.
"""
