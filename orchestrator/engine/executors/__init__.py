"""Executors by name: ``local`` (in-process) and ``ray``. The config schema, the loader's notes,
the CLI's choices and :func:`~.registry.make_executor` read the one table
:data:`~.registry.EXECUTORS`, so adding an executor, or an option one of them honours, is one
entry. Import each name from the module that defines it (``registry``, ``base``, ``local``,
``pooling``): this package re-exports nothing.

Ray is imported only when a Ray executor starts, never by importing this package.
"""
