"""What a front end does with a program beyond building it, one module a program: read its labelled
examples, evaluate it into a report, run one input into printable text, compile it.

The registry (:mod:`tracerag.registry`) holds these hooks on each program's entry, so the command line
has one ``evaluate``, one ``run`` and one ``compile`` for every program. A hook takes keyword options
named after the command line's flags (as the builders do), plus ``build``: a callable that builds the
program with the front end's options and the hook's own (``build(k=20)``), so a hook decides what it
needs to change and closes what it opened.
"""
