"""The command line's parts that are not one command's own: the shared flags, what a command sets up from
them, the report table, and the commands that are no program's (build-bank, ingest, serve).

``optimize.py`` (the ``tracerag`` command) parses, calls the registry's workflows and prints; nothing below
this package imports it.
"""
