"""Names of PyTorch's surface built from hookgrad's primitives (issue 21, census).

Each function here is a composite of existing hookgrad ops, so its gradient (and double
backward) comes from the primitives it uses; `install` puts the functions on the ``hookgrad``
namespace and, where PyTorch has them, on `Tensor` as methods and in-place ``<name>_`` variants.
"""
