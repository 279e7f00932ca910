"""``counterfact view``: a local, read-only web viewer over run directories.

Modules, by job: ``files`` finds the run directories under the served folder and opens their
files (regular files only); ``index`` indexes ``runs.jsonl`` and ``verdicts.jsonl`` once by byte
offset (and extends the index as a running sweep appends), so no page reads a 50,000-line file
whole; ``rundir`` is one directory's records, cached by file identity; ``html`` holds the
escaping and the page shell; ``pages``, ``arm``, ``question``, ``compare`` and ``live`` build
the pages; ``app`` routes them (starlette, GET only); ``server`` runs it on uvicorn.

starlette and uvicorn (the ``view`` extra) are imported only by ``app`` and ``server``.
"""
