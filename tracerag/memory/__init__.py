"""What agents learned, kept to be retrieved: solved traces and their on-disk format (``traces``), the
experience bank built from the correct ones (``experience_bank``), and the planner's playbook of citable
bullets and reference templates (``playbook``).
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".traces": ("Trace", "TraceLoad", "load_traces"),
    ".experience_bank": ("BankBuildReport", "build_experience_bank"),
    ".playbook": ("Playbook", "PlaybookError", "load_playbook", "parse_playbook"),
})
