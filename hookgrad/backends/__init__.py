"""``hookgrad.backends``: the backend switches training scripts set or query.

Mirrors: ``torch.backends`` of a CPU build (``cudnn``, ``cuda``, ``mkldnn``, ``mkl``, ``openmp``,
``mps``, ``cpu``, ``opt_einsum``). hookgrad runs on NumPy, so every flag is a recorded, settable
setting with no effect on results (documented no-ops); the availability queries answer as a CPU
build of PyTorch does.
"""

from __future__ import annotations

from hookgrad.backends import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum
from hookgrad.backends import cusparselt, kleidiai, mha, nnpack
from hookgrad.backends import miopen, quantized

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum", "cusparselt",
           "kleidiai", "mha", "nnpack", "miopen", "quantized"]
