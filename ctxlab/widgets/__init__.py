"""ipywidgets of the course, one module each (import the module you need).

Every widget renders with a Japanese font, redraws on change without blocking, and keeps
its state in the kernel so a notebook can read it. No grading depends on a widget.
"""
