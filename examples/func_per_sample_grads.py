"""Per-sample gradients with vmap(grad) over functional_call (the torch.func tutorial).

Run: ``python examples/func_per_sample_grads.py`` (hookgrad) or pass ``--torch``.
"""

import sys

import numpy as np


def run(torch):
    """Per-sample gradients of a small CNN, by vmap and by a loop; returns both."""
    functional_call, grad, vmap = torch.func.functional_call, torch.func.grad, torch.func.vmap
    nn, F = torch.nn, torch.nn.functional


    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3)
            self.fc1 = nn.Linear(4 * 3 * 3, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            return self.fc1(torch.flatten(x, 1))

    rng = np.random.default_rng(0)
    model = SimpleCNN()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.normal(scale=0.3, size=tuple(p.shape)).astype(np.float32)))
    data = torch.tensor(rng.normal(size=(8, 1, 8, 8)).astype(np.float32))
    targets = torch.tensor(rng.integers(0, 10, size=8))
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        return F.cross_entropy(predictions, targets)

    ft_grads = vmap(grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data,
                                                                     targets)
    loop = [grad(compute_loss)(params, buffers, data[i], targets[i]) for i in range(8)]
    return {k: (v.numpy(), np.stack([g[k].numpy() for g in loop])) for k, v in ft_grads.items()}


if __name__ == "__main__":
    if "--torch" in sys.argv:
        import torch as lib
    else:
        import hookgrad as lib
    for name, (vm, lp) in run(lib).items():
        print(f"{name:14} shape={vm.shape} max|vmap - loop|={np.abs(vm - lp).max():.2e}")
