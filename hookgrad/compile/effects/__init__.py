"""Stage 1 of compile: side effects of a traced region (world snapshots, reconstruction)."""
