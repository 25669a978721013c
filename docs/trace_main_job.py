"""Two training steps of `hookgrad train`'s CNN on the digits, with the training monitor's hooks
and three classic hook mistakes, for `hookgrad trace`:

    hookgrad trace --out trace-report docs/trace_main_job.py

Replace `import hookgrad as torch` by `import torch` (and build the same layers) to trace the
PyTorch version: the report is the same.
"""

import hookgrad as torch
from hookgrad.cli.train import build_model
from hookgrad.datasets import load_digits
from hookgrad.hooktools import TrainingMonitor

torch.manual_seed(0)
x, y = load_digits()
model = build_model("cnn", x.shape[1:], 10)  # Conv-ReLU-Pool x2, Flatten, Linear
monitor = TrainingMonitor(model)  # forward, tensor and post-accumulate hooks on every layer

# Mistake 1: a hook on the classifier, which is then replaced by a fresh layer.
model[7].register_forward_hook(lambda m, args, out: print("logits", out.shape))
model[7] = torch.nn.Linear(128, 10)
# Mistake 2: a gradient hook on a parameter that is frozen afterwards.
model[3].bias.register_post_accumulate_grad_hook(lambda p: print("conv2 bias grad", p.grad))
model[3].bias.requires_grad_(False)
opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-3)

for step in range(2):
    xb, yb = torch.tensor(x[32 * step:32 * (step + 1)]), torch.tensor(y[32 * step:32 * (step + 1)])
    loss = torch.nn.functional.cross_entropy(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    monitor.end_step()
# Mistake 3: a hook on the loss registered after its backward pass.
loss.register_hook(lambda g: print("loss grad", g))
print(f"loss {loss.item():.4f}")
