"""Module full backward hooks compiled into the graph (issue 11, beyond spec §8.5).

PyTorch graph-breaks on a module with backward hooks unless compiled autograd is on
(pytorch#117266, #133303). hookgrad keeps them in the graph instead: each
``BackwardHook.setup_input_hook``/``setup_output_hook`` of a traced module call becomes one
``backward_hook_setup`` node. At run time the node rebuilds the call's `BackwardHook` from the
module (fetched through its source for this call) and the module's and global backward hooks
registered *now*, and passes the tensors through its ``BackwardHookFunctionBackward`` identity
node, so the hooks fire in eager's order with eager's arguments.
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.compile.core.state import current_run
from hookgrad.nn.modules._backward_hook import BackwardHook
from hookgrad.nn.modules._call import _backward_hooks
from hookgrad.nn.modules._global_hooks import _global_backward_hooks, _global_backward_pre_hooks

__all__ = ["backward_hook_setup", "new_backward_hook", "REAL_SETUP"]

REAL_SETUP = {"input": BackwardHook.setup_input_hook, "output": BackwardHook.setup_output_hook}


def new_backward_hook(module: Any) -> BackwardHook:
    """A `BackwardHook` for `module` with the full backward (pre-)hooks registered right now,
    global ones first, as eager's ``Module.__call__`` builds it for one call."""
    pre: list = []
    if module._backward_pre_hooks or _global_backward_pre_hooks:
        pre = [*_global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]
    full: list = []
    if module._backward_hooks or _global_backward_hooks:
        full, _legacy = _backward_hooks(module)
    return BackwardHook(module, full, pre)


def backward_hook_setup(slot: int, kind: str, single: bool, *tensors: Tensor) -> Any:
    """Graph operator: route `tensors` through this call's `BackwardHook` (`kind` side)."""
    run = current_run()
    bw = run.bwhooks.get(slot)
    if bw is None:
        bw = run.bwhooks[slot] = new_backward_hook(run.objects[slot])
    arg = tensors[0] if single else tuple(tensors)
    return REAL_SETUP[kind](bw, arg)
