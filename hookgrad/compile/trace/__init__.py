"""Stage 2 of compile: tracing a frame into a graph (the `bind` recorder, interception, tracer)."""
