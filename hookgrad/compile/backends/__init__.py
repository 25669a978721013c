"""Stage 5 of compile: backends that turn a graph into a callable (eager, aot_eager, inductor)."""
