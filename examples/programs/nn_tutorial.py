"""The PyTorch tutorials "What is torch.nn really?" and "Transfer Learning for Computer Vision",
condensed: logistic regression from raw tensors (``weights.requires_grad_()``, manual updates
under ``no_grad``), then ``nn.Module``/``nn.Linear``/``optim``, ``TensorDataset``/``DataLoader``,
``get_model``/``loss_batch``/``fit`` with ``np.sum(np.multiply(losses, nums))``, a CNN through
``nn.Sequential(Lambda(...))`` with ``AdaptiveAvgPool2d``, a ``WrappedDataLoader``; then
``train_model`` with phases, ``torch.set_grad_enabled``, ``copy.deepcopy(model.state_dict())``,
``lr_scheduler.StepLR`` and a ``random_split`` with a seeded generator. Synthetic data."""
import copy
import math
import os
import tempfile

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.optim import lr_scheduler
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
n, bs = 96, 16
x_train = torch.rand(n, 784)
y_train = (x_train[:, :392].sum(1) > x_train[:, 392:].sum(1)).long() + \
    2 * (x_train[:, ::2].sum(1) > 196).long()
x_valid, y_valid = x_train[:32].clone(), y_train[:32].clone()

# --- from scratch ------------------------------------------------------------------------------
weights = torch.randn(784, 10) / math.sqrt(784)
weights.requires_grad_()
bias = torch.zeros(10, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


loss_func = nll
lr = 0.5
for epoch in range(2):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print('scratch', loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item())


# --- nn + fit ----------------------------------------------------------------------------------
class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(784, 10)

    def forward(self, xb):
        return self.lin(xb)


def get_data(train_ds, valid_ds, bs):
    return (DataLoader(train_ds, batch_size=bs, shuffle=True),
            DataLoader(valid_ds, batch_size=bs * 2))


def get_model():
    model = Mnist_Logistic()
    return model, optim.SGD(model.parameters(), lr=lr)


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.item(), len(xb)


def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)
        model.eval()
        with torch.no_grad():
            losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
        val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
        print(epoch, val_loss)


loss_func = F.cross_entropy
train_dl, valid_dl = get_data(TensorDataset(x_train, y_train), TensorDataset(x_valid, y_valid), bs)
model, opt = get_model()
fit(2, model, loss_func, opt, train_dl, valid_dl)


class Lambda(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, x):
        return self.func(x)


def preprocess(x, y):
    return x.view(-1, 1, 28, 28), y


class WrappedDataLoader:
    def __init__(self, dl, func):
        self.dl = dl
        self.func = func

    def __len__(self):
        return len(self.dl)

    def __iter__(self):
        for b in self.dl:
            yield (self.func(*b))


train_dl = WrappedDataLoader(train_dl, preprocess)
valid_dl = WrappedDataLoader(valid_dl, preprocess)
model = nn.Sequential(
    nn.Conv2d(1, 8, kernel_size=3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(8, 8, kernel_size=3, stride=2, padding=1), nn.ReLU(),
    nn.Conv2d(8, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    Lambda(lambda x: x.view(x.size(0), -1)),
)
opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
fit(2, model, loss_func, opt, train_dl, valid_dl)


# --- transfer-learning style train_model -------------------------------------------------------
full = TensorDataset(x_train.view(-1, 1, 28, 28), y_train)
train_set, val_set = random_split(full, [0.75, 0.25], generator=torch.Generator().manual_seed(42))
dataloaders = {'train': DataLoader(train_set, batch_size=8, shuffle=True),
               'val': DataLoader(val_set, batch_size=8)}
dataset_sizes = {x: len(s) for x, s in (('train', train_set), ('val', val_set))}
print('split', dataset_sizes, train_set.indices[:5])


def train_model(model, criterion, optimizer, scheduler, num_epochs=3):
    with tempfile.TemporaryDirectory() as tempdir:
        best_model_params_path = os.path.join(tempdir, 'best_model_params.pt')
        torch.save(model.state_dict(), best_model_params_path)
        best_acc = 0.0
        for epoch in range(num_epochs):
            for phase in ['train', 'val']:
                if phase == 'train':
                    model.train()
                else:
                    model.eval()
                running_loss = 0.0
                running_corrects = 0
                for inputs, labels in dataloaders[phase]:
                    optimizer.zero_grad()
                    with torch.set_grad_enabled(phase == 'train'):
                        outputs = model(inputs)
                        _, preds = torch.max(outputs, 1)
                        loss = criterion(outputs, labels)
                        if phase == 'train':
                            loss.backward()
                            optimizer.step()
                    running_loss += loss.item() * inputs.size(0)
                    running_corrects += torch.sum(preds == labels.data)
                if phase == 'train':
                    scheduler.step()
                epoch_loss = running_loss / dataset_sizes[phase]
                epoch_acc = running_corrects.double() / dataset_sizes[phase]
                print(f'{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}')
                if phase == 'val' and epoch_acc > best_acc:
                    best_acc = epoch_acc
                    best_wts = copy.deepcopy(model.state_dict())
                    torch.save(model.state_dict(), best_model_params_path)
        print(f'Best val Acc: {best_acc:4f}')
        model.load_state_dict(torch.load(best_model_params_path, weights_only=True))
        print('deepcopy matches file', all(torch.equal(best_wts[k], v)
                                           for k, v in model.state_dict().items()))
    return model


model_ft = nn.Sequential(nn.Conv2d(1, 6, 5), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(4),
                         nn.Flatten(), nn.Linear(6 * 6 * 6, 4))
optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.01, momentum=0.9)
exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=2, gamma=0.1)
model_ft = train_model(model_ft, nn.CrossEntropyLoss(), optimizer_ft, exp_lr_scheduler, 3)
