"""torchviz's ``make_dot`` drawing a hookgrad autograd graph, with only the import swapped.

torchviz walks ``grad_fn.next_functions`` and lists ``dir(grad_fn)`` for ``_saved_*`` tensors;
hookgrad's graph exposes both as PyTorch does. Prints the Graphviz source (render it with
``dot -Tpng``). Needs ``pip install torchviz``.
"""

import warnings

from hookgrad.testing._as_torch import as_torch

# torchviz compares versions with distutils' deprecated LooseVersion (a warning, with any torch)
warnings.filterwarnings("ignore", "distutils Version classes are deprecated", DeprecationWarning)

with as_torch(tools=("torchviz",)) as torch:
    from torchviz import make_dot

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x = torch.randn(2, 3, requires_grad=True)
    loss = model(x).pow(2).mean()
    dot = make_dot(loss, params={**dict(model.named_parameters()), "x": x}, show_saved=True)
    print(dot.source)
    assert "AddmmBackward0" in dot.source and "TanhBackward0" in dot.source
