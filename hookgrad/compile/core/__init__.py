"""Stage 0 of compile: configuration, counters, exceptions, state, sources and the IR (`graph`)."""
