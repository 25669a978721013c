"""Code generation for the ``"inductor"`` backend (issue 11's optimised backend).

- `pointwise`: the lowering table (the inline forward source of each primitive, on arrays and
  on a kernel's scalars).
- `derivative`: a node's derivative, traced from the op table's own VJP rules and written with
  that lowering (NOTE [Traced derivatives]).
- `schedule`: the order of a compiled backward, asked of the engine's schedule.
- `backward`: straight-line source for the backward of a joint program (no Tensor, no bind).
- `fusion`: groups of consecutive elementwise nodes, run as one Numba kernel when Numba is
  installed (`kernels`), else as generated NumPy code.
"""
