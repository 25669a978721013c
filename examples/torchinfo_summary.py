"""torchinfo's ``summary`` on a hookgrad model, with only the import swapped.

torchinfo registers forward hooks on every submodule to record shapes and parameter counts;
hookgrad runs those hooks exactly as PyTorch does, so the unmodified tool works. Run with
``python examples/torchinfo_summary.py`` (needs ``pip install torchinfo``).
"""

import hookgrad
from hookgrad.testing._as_torch import as_torch

with as_torch(tools=("torchinfo",)) as torch:  # `import torch` now gives hookgrad
    from torchinfo import summary

    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(8 * 13 * 13, 10),
    )
    stats = summary(model, input_size=(4, 1, 28, 28), verbose=0,
                    col_names=("input_size", "output_size", "num_params", "mult_adds"))
    print(stats)
    assert torch is hookgrad and stats.total_params == sum(p.numel() for p in model.parameters())
