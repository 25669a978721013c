"""pytorch/examples mnist_hogwild: Hogwild! training — the model's parameters are put in shared
memory (``model.share_memory()``) and ``torch.multiprocessing`` processes train it at once, each
with its own seed and data loader; the parent then tests the shared model.

With ``--num-processes 1`` (the default here) the result is deterministic; more processes race
on the shared weights, as Hogwild! intends. Synthetic images stand in for MNIST."""
from __future__ import print_function

import argparse
import os

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

parser = argparse.ArgumentParser(description='PyTorch MNIST Hogwild Example')
parser.add_argument('--batch-size', type=int, default=16, metavar='N')
parser.add_argument('--test-batch-size', type=int, default=32, metavar='N')
parser.add_argument('--epochs', type=int, default=1, metavar='N')
parser.add_argument('--lr', type=float, default=0.01, metavar='LR')
parser.add_argument('--momentum', type=float, default=0.5, metavar='M')
parser.add_argument('--seed', type=int, default=1, metavar='S')
parser.add_argument('--log-interval', type=int, default=1, metavar='N')
parser.add_argument('--num-processes', type=int, default=1, metavar='N')
parser.add_argument('--dry-run', action='store_true', default=False)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def digits(n, seed):
    g = torch.Generator().manual_seed(seed)
    targets = torch.randint(0, 10, (n,), generator=g)
    images = torch.rand(n, 1, 28, 28, generator=g) * 0.3
    for i, t in enumerate(targets.tolist()):
        images[i, 0, 2 + 2 * t:5 + 2 * t, 4:24] += 0.7
    return torch.utils.data.TensorDataset((images - 0.1307) / 0.3081, targets)


def train(rank, args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed + rank)
    train_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        train_epoch(epoch, args, model, device, train_loader, optimizer)


def test(args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed)
    test_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    test_epoch(model, device, test_loader)


def train_epoch(epoch, args, model, device, data_loader, optimizer):
    model.train()
    pid = os.getpid()
    for batch_idx, (data, target) in enumerate(data_loader):
        optimizer.zero_grad()
        output = model(data.to(device))
        loss = F.nll_loss(output, target.to(device))
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('{}\tTrain Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                'worker' if pid != PARENT else 'parent', epoch, batch_idx * len(data),
                len(data_loader.dataset), 100. * batch_idx / len(data_loader), loss.item()),
                flush=True)
            if args.dry_run:
                break


def test_epoch(model, device, data_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in data_loader:
            output = model(data.to(device))
            test_loss += F.nll_loss(output, target.to(device), reduction='sum').item()
            pred = output.max(1)[1]
            correct += pred.eq(target.to(device)).sum().item()
    test_loss /= len(data_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(data_loader.dataset),
        100. * correct / len(data_loader.dataset)))


PARENT = os.getpid()

if __name__ == '__main__':
    args = parser.parse_args()
    device = torch.device("cpu")
    dataset1 = digits(48, 1)
    dataset2 = digits(32, 2)
    kwargs = {'batch_size': args.batch_size, 'shuffle': True}
    torch.manual_seed(args.seed)
    mp.set_start_method('fork', force=True)  # the example uses 'spawn' on CUDA

    model = Net().to(device)
    model.share_memory()  # gradients are allocated lazily, so they are not shared here
    print('shared', all(p.is_shared() for p in model.parameters()))

    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, device, dataset1, kwargs))
        # We first train the model across `num_processes` processes
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    print('exit codes', [p.exitcode for p in processes])

    # Once training is complete, we can test the model
    test(args, model, device, dataset2, kwargs)
