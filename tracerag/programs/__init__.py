"""What every program's ``dspy.Module`` shares: guarded LM stages and pipelines (``guarded_step``), retrieval
steps as spans (``spans``) and image captioning (``captioning``). The programs themselves live in their own
packages (``tracerag.commands``, ``experience``, ``rag``, ``planner``, ``agent``), above this one.
"""
