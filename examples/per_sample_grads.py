"""Per-sample gradients from module hooks (Opacus/BackPACK style), written for PyTorch.

Forward hooks keep each Linear layer's input; full backward hooks receive the gradient of its
output; their batched outer products are the per-sample weight gradients. The script checks them
against one backward pass per sample, then takes a DP-SGD-style step (clip each sample's
gradient, average, add no noise so the run is reproducible). Run with PyTorch or unmodified on
hookgrad (``python -m hookgrad.run examples/per_sample_grads.py``): the printed numbers agree.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class GradSampler:
    """Attach hooks to every Linear layer and compute ``param.grad_sample`` after backward."""

    def __init__(self, model):
        self.handles = []
        for module in model.modules():
            if isinstance(module, nn.Linear):
                self.handles.append(module.register_forward_hook(self._capture_activation))
                self.handles.append(module.register_full_backward_hook(self._compute))

    @staticmethod
    def _capture_activation(module, inputs, output):
        module._activation = inputs[0].detach()

    @staticmethod
    def _compute(module, grad_input, grad_output):
        backprops = grad_output[0].detach()
        module.weight.grad_sample = torch.einsum("ni,nj->nij", backprops, module._activation)
        if module.bias is not None:
            module.bias.grad_sample = backprops.clone()

    def remove(self):
        for h in self.handles:
            h.remove()


def make_model():
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    with torch.no_grad():  # fixed, RNG-free weights so runs compare across libraries
        for i, p in enumerate(model.parameters()):
            idx = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.cos(idx * 0.53 + i) * 0.3).view_as(p))
    return model


def main():
    model = make_model()
    # inputs that require grad keep the full backward hooks on their documented path
    x = torch.linspace(-1.0, 1.0, 5 * 6).view(5, 6).requires_grad_()
    y = torch.tensor([0, 2, 1, 1, 0])
    sampler = GradSampler(model)
    loss = F.cross_entropy(model(x), y, reduction="sum")
    loss.backward()
    print(f"loss {loss.item():.6f}")
    sampler.remove()
    params = list(model.parameters())
    for n in range(x.shape[0]):  # reference: one backward pass per sample
        grads = torch.autograd.grad(F.cross_entropy(model(x[n:n + 1]), y[n:n + 1],
                                                    reduction="sum"), params)
        err = max((g - p.grad_sample[n]).abs().max().item() for g, p in zip(grads, params))
        print(f"sample {n}: max |hook - loop| = {err:.2e}")
    for p in params:  # summed per-sample grads equal the batch gradient
        assert torch.allclose(p.grad_sample.sum(0), p.grad, atol=1e-6)
    norms = torch.stack([p.grad_sample.flatten(1).norm(dim=1) for p in params], 1).norm(dim=1)
    print("per-sample norms", " ".join(f"{v:.6f}" for v in norms.tolist()))
    factor = (1.0 / (norms + 1e-6)).clamp(max=1.0)
    with torch.no_grad():
        for p in params:
            clipped = torch.einsum("n,n...->...", factor, p.grad_sample) / x.shape[0]
            p.sub_(0.5 * clipped)
    print(f"loss after one clipped step {F.cross_entropy(model(x), y).item():.6f}")


if __name__ == "__main__":
    main()
