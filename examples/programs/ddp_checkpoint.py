"""The PyTorch DDP tutorial (intermediate/ddp_tutorial, pytorch/examples distributed/ddp):
``demo_basic`` and ``demo_checkpoint`` on the gloo backend with ``mp.spawn``: a ToyModel wrapped
in ``DistributedDataParallel``, rank 0 saves the state dict, every rank loads it with a
``map_location`` after a barrier, trains a step, and the parent reads back what rank 0 saved."""
import argparse
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size, port):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = str(port)
    # initialize the process group
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic(rank, world_size, port, out):
    setup(rank, world_size, port)
    torch.manual_seed(0)  # every rank builds the same model; DDP broadcasts rank 0's anyway
    model = ToyModel()
    ddp_model = DDP(model)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    torch.manual_seed(100 + rank)  # each rank its own data
    for _ in range(3):
        optimizer.zero_grad()
        outputs = ddp_model(torch.randn(20, 10))
        labels = torch.randn(20, 5)
        loss_fn(outputs, labels).backward()
        optimizer.step()
    if rank == 0:
        torch.save(ddp_model.state_dict(), os.path.join(out, 'basic.pt'))
    cleanup()


def demo_checkpoint(rank, world_size, port, out):
    setup(rank, world_size, port)
    torch.manual_seed(rank)  # different initial weights: DDP's broadcast makes them rank 0's
    model = ToyModel()
    ddp_model = DDP(model)
    CHECKPOINT_PATH = os.path.join(out, 'model.checkpoint')
    if rank == 0:
        # All processes should see same parameters as they all start from same
        # random parameters and gradients are synchronized in backward passes.
        # Therefore, saving it in one process is sufficient.
        torch.save(ddp_model.state_dict(), CHECKPOINT_PATH)
    # Use a barrier() to make sure that process 1 loads the model after process 0 saves it.
    dist.barrier()
    map_location = {'cuda:%d' % 0: 'cpu'}
    ddp_model.load_state_dict(torch.load(CHECKPOINT_PATH, map_location=map_location,
                                         weights_only=True))
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    optimizer.zero_grad()
    torch.manual_seed(200 + rank)
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5)
    loss = loss_fn(outputs, labels)
    loss.backward()
    optimizer.step()
    gathered = [torch.zeros(1) for _ in range(world_size)]
    dist.all_gather(gathered, loss.detach().reshape(1))
    if rank == 0:
        torch.save({'after': ddp_model.module.state_dict(), 'losses': torch.cat(gathered)},
                   os.path.join(out, 'after.pt'))
    # Not necessary to use a dist.barrier() to guard the file deletion below
    # as the AllReduce ops in the backward pass of DDP already served as a synchronization.
    cleanup()


def run_demo(demo_fn, world_size, port, out):
    mp.spawn(demo_fn, args=(world_size, port, out), nprocs=world_size, join=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('--world-size', type=int, default=2)
    parser.add_argument('--port', type=int, default=29533)
    args = parser.parse_args()
    out = os.path.abspath('.')
    run_demo(demo_basic, args.world_size, args.port, out)
    state = torch.load(os.path.join(out, 'basic.pt'))
    print('basic', sorted(state), ['%.6f' % v.sum().item() for v in state.values()])
    run_demo(demo_checkpoint, args.world_size, args.port + 1, out)
    after = torch.load(os.path.join(out, 'after.pt'))
    print('losses', ['%.6f' % v for v in after['losses'].tolist()])
    print('after', ['%.6f' % v.sum().item() for v in after['after'].values()])
