"""Code generation for the ``"inductor"`` backend (issue 11's optimised backend).

- `pointwise`: the elementwise lowering table (forward and VJP expressions per primitive).
- `backward`: straight-line source for the backward of a joint program (no Tensor, no bind).
- `fusion`: groups of consecutive elementwise nodes, run as one Numba kernel when Numba is
  installed (`kernels`), else as generated NumPy code.
"""
