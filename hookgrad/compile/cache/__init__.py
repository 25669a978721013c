"""Stage 6 of compile: the per-code-object cache that runs guards, traces and dispatches."""
