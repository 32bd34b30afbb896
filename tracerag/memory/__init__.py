"""What agents learned, kept to be retrieved: solved traces and their on-disk format (``traces``), the
experience bank built from the correct ones (``experience_bank``), and the planner's playbook of citable
bullets and reference templates (``playbook``).
"""
