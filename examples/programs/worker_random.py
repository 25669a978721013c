"""Random data augmentation inside DataLoader workers: each worker's ``torch``, ``random`` and
NumPy generators are seeded from the loader's base seed and the worker id (PyTorch's
``_worker_loop``), ``get_worker_info()`` tells a dataset which worker it runs in,
``worker_init_fn`` runs first, and ``persistent_workers`` keeps the workers across epochs."""
import argparse
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info


class Augmented(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = get_worker_info()
        wid = -1 if info is None else info.id
        return (torch.tensor([float(i), float(wid)]), torch.rand(2), random.random(),
                float(np.random.rand()))


class Stream(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        lo, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(lo, 10, step):
            yield torch.tensor([i]), torch.randint(0, 100, (1,))


def init_fn(worker_id):
    torch.manual_seed(torch.initial_seed() + 1000)  # a common pattern: re-seed from the base


parser = argparse.ArgumentParser()
parser.add_argument('--workers', type=int, default=2)
args = parser.parse_args()
torch.manual_seed(3)
random.seed(3)
np.random.seed(3)
for kwargs in ({}, {'worker_init_fn': init_fn}, {'persistent_workers': args.workers > 0}):
    loader = DataLoader(Augmented(), batch_size=4, shuffle=True, num_workers=args.workers,
                        **kwargs)
    for epoch in range(2):
        for idx_wid, r, py, npy in loader:
            print(epoch, idx_wid.tolist(), [round(v, 6) for v in r.view(-1).tolist()],
                  [round(float(v), 6) for v in py], [round(float(v), 6) for v in npy])
g = torch.Generator()
g.manual_seed(11)
for idx, r in DataLoader(Stream(), batch_size=3, num_workers=args.workers, generator=g):
    print('stream', idx.view(-1).tolist(), r.view(-1).tolist())
