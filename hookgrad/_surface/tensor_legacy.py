"""``Tensor`` methods whose PyTorch behaviour needs no new op: the removed ``reinforce``, the
state-dict loading hook ``module_load``, and ``to_padded_tensor`` of nested tensors.

Mirrors: ``torch.Tensor.reinforce`` (raises PyTorch's RuntimeError), ``torch.Tensor.module_load``,
``torch.Tensor.to_padded_tensor`` (hookgrad tensors are dense: PyTorch raises
``NotImplementedError`` for a dense CPU tensor, and so does this).
"""

from __future__ import annotations

from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.autograd._torch_function import handle_torch_function, has_torch_function

__all__: list[str] = []

_REINFORCE = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""


def reinforce(self: Tensor, reward: Any) -> None:
    """Removed from PyTorch long ago; raises with the advice PyTorch gives.

    Mirrors: ``torch.Tensor.reinforce``.
    """
    raise RuntimeError(_REINFORCE)


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """The value `other` becomes when `Module.load_state_dict` swaps it in for ``self``.

    ``other.detach()`` with ``assign``; otherwise ``self.copy_(other).detach()`` (so dtype and
    device stay ``self``'s). A tensor subclass may override it.

    Mirrors: ``torch.Tensor.module_load``.
    """
    if has_torch_function((self, other)):
        return handle_torch_function(Tensor.module_load, (self, other), self, other,
                                     assign=assign)
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def to_padded_tensor(self: Tensor, padding: float, output_size: Any = None) -> Tensor:
    """Pad a nested tensor to a dense one: not defined for the dense tensors hookgrad has.

    Mirrors: ``torch.Tensor.to_padded_tensor`` (PyTorch's error for a dense CPU tensor).
    """
    raise NotImplementedError(
        "Could not run 'aten::to_padded_tensor' with arguments from the 'CPU' backend. This "
        "could be because the operator doesn't exist for this backend. 'aten::to_padded_tensor' "
        "is only available for nested tensors (hookgrad has none).")


METHODS = {"reinforce": reinforce, "module_load": module_load,
           "to_padded_tensor": to_padded_tensor}
