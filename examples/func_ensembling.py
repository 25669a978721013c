"""Model ensembling with stack_module_state + vmap (the torch.func tutorial).

Run: ``python examples/func_ensembling.py`` (hookgrad) or pass ``--torch``.
"""

import copy
import sys

import numpy as np


def run(torch):
    """Predictions of 4 MLPs: a loop, vmap over different minibatches and over one minibatch."""
    fc, stack_module_state, vmap = (torch.func.functional_call, torch.func.stack_module_state,
                                    torch.func.vmap)
    functional_call, nn = fc, torch.nn


    rng = np.random.default_rng(1)

    def make():
        m = nn.Sequential(nn.Flatten(), nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5))
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(torch.tensor(rng.normal(scale=0.3, size=tuple(p.shape)).astype(
                    np.float32)))
        return m

    models = [make() for _ in range(4)]
    data = torch.tensor(rng.normal(size=(4, 6, 4, 4)).astype(np.float32))
    minibatch = data[0]
    loop_diff = [m(d) for m, d in zip(models, data)]
    loop_same = [m(minibatch) for m in models]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0])

    def fmodel(params, buffers, x):
        return functional_call(base, (params, buffers), (x,))

    diff = vmap(fmodel)(params, buffers, data)
    same = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    return {"different": (diff.detach().numpy(), np.stack([p.detach().numpy() for p in loop_diff])),
            "same": (same.detach().numpy(), np.stack([p.detach().numpy() for p in loop_same]))}


if __name__ == "__main__":
    if "--torch" in sys.argv:
        import torch as lib
    else:
        import hookgrad as lib
    for name, (vm, lp) in run(lib).items():
        print(f"{name:10} shape={vm.shape} max|vmap - loop|={np.abs(vm - lp).max():.2e}")
