"""Reading users' data files: bounded, regular-file-only reads, JSON Lines with errors that name the file and
line, what a read kept and skipped (``read_report``), and the bundled datasets' names (``bundled``).

Everything that loads a home, traces, documents or a playbook reads through here, so it imports nothing else
of tracerag.
"""
