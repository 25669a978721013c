"""A PyTorch program as users write it: ``mp.spawn`` two ranks that meet through
``MASTER_ADDR``/``MASTER_PORT`` (gloo), train one DDP step and talk point to point. Run as
``python spawn_program.py PORT`` with torch, or through ``python -m hookgrad.run``."""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.arange(32, dtype=torch.float32).reshape(8, 4) / 10 * (rank + 1)
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    t = torch.tensor([float(rank)])
    if rank == 0:
        dist.send(t + 10, 1)
    else:
        dist.recv(t, 0)
    gathered = [torch.zeros(2, 4) for _ in range(world)]
    dist.all_gather(gathered, model.module.weight.detach())
    # the first word names the library the rank ran (``torch.__spec__`` stays hookgrad's
    # under the alias): a rank that re-imported the real torch would print "torch"
    line = (f"{torch.__spec__.name} {rank} {round(loss.item(), 5)} {t.item()} {bool(torch.equal(*gathered))} "
            f"{[round(v, 5) for v in model.module.weight.detach().flatten().tolist()]}\n")
    os.write(1, line.encode())  # one write: the ranks' lines never interleave
    dist.destroy_process_group()


def fails(rank):
    if rank == 1:
        raise ValueError("rank 1 fails on purpose")


if __name__ == "__main__":
    if sys.argv[2:] == ["fail"]:
        try:
            mp.spawn(fails, nprocs=2)
        except mp.ProcessRaisedException as exc:
            print("raised", exc.error_index, "ValueError: rank 1 fails on purpose" in str(exc))
    else:
        mp.spawn(worker, args=(2, int(sys.argv[1])), nprocs=2, join=True)
