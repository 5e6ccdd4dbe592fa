"""Child processes: isolated calls, the multi-process launcher and its worker."""
