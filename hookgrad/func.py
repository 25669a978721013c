"""Composable function transforms: vmap, grad, vjp, jvp, jacrev, jacfwd, hessian, linearize.

Mirrors: ``torch.func``. The implementation lives in ``hookgrad._functorch`` (see docs/func.md):
``vmap`` is an interpreter on the one door (``bind``), batching rules are a column of the op
table, and the autodiff transforms run on the tape and on forward AD, so every transform
composes with every other in any order.
"""

from __future__ import annotations

from hookgrad._functorch._autodiff import grad, grad_and_value, jvp, linearize, vjp
from hookgrad._functorch.batch_norm_replacement import replace_all_batch_norm_modules_
from hookgrad._functorch.eager_transforms import debug_unwrap, functionalize
from hookgrad._functorch.functional_call import functional_call, stack_module_state
from hookgrad._functorch.jacobians import hessian, jacfwd, jacrev
from hookgrad._functorch.vmap import vmap

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "linearize", "functional_call", "stack_module_state", "functionalize", "debug_unwrap",
           "replace_all_batch_norm_modules_"]
