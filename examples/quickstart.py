"""The README example: a tiny model trained with hooks watching it (placeholder main job)."""

import hookgrad as torch

torch_log = []
w = torch.tensor([0.5, -0.3], requires_grad=True)
w.register_hook(lambda g: torch_log.append(("w.grad", [round(v, 4) for v in g.tolist()])))
x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
y = torch.tensor([1.0, 2.0])
for step in range(3):
    loss = ((x * w).sum(1) - y).exp().sum()
    loss.backward()
    with torch.no_grad():
        w.sub_(w.grad * 0.01)
    w.grad = None
    print(f"step {step}: loss={loss.item():.4f}")
print("hook log:", torch_log)
