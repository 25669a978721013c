"""Stage 3 of compile: guards that decide whether a cached graph may run again."""
