"""``torch._functorch.eager_transforms``: the autodiff transforms at their legacy path.

Mirrors: ``torch._functorch.eager_transforms`` (grad, grad_and_value, vjp, jvp, jacrev,
jacfwd, hessian, linearize, functional_call).
"""

from __future__ import annotations

from hookgrad._functorch._autodiff import grad, grad_and_value, jvp, linearize, vjp
from hookgrad._functorch.functional_call import functional_call
from hookgrad._functorch.jacobians import hessian, jacfwd, jacrev

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "functional_call"]
