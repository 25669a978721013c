"""Stage 7 of compile: compiled autograd (capturing the backward pass as a graph)."""
