"""What every program's workflows share: the outcome a workflow hands its front end (``results``) and telling
what reading a data file did (``reading``). Each program's workflows (examples, evaluate, run, compile) are its
package's ``workflow`` module, listed by the registry (:mod:`tracerag.registry`) on the program's entry, so
the command line has one ``evaluate``, one ``run`` and one ``compile`` for every program. A hook takes keyword
options named after the command line's flags (as the builders do), plus ``build``: a callable that builds the
program with the front end's options and the hook's own (``build(k=20)``), so a hook decides what it needs to
change and closes what it opened.
"""
