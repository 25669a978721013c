"""A one-process gloo DDP program with PowerSGD, written for PyTorch (run unmodified under
``python -m hookgrad.run``): prints the compressed gradients' sums and the next global draws."""

import sys
import tempfile

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as ps
from torch.nn.parallel import DistributedDataParallel as DDP

store = tempfile.mktemp()
dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(40, 40), torch.nn.ReLU(), torch.nn.Linear(40, 40))
ddp = DDP(model)
state = ps.PowerSGDState(process_group=None, matrix_approximation_rank=1, start_powerSGD_iter=2,
                         min_compression_rate=2, warm_start=sys.argv[1:] == ["warm"],
                         random_seed=3)
ddp.register_comm_hook(state, ps.powerSGD_hook)
for _ in range(5):
    model.zero_grad()
    ddp(torch.randn(30, 40)).pow(2).sum().backward()
    print(" ".join(f"{float(p.grad.sum()):.6g}" for p in model.parameters()))
print(" ".join(f"{v:.9g}" for v in torch.rand(2).tolist()))
dist.destroy_process_group()
