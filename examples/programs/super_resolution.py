"""pytorch/examples super_resolution (model.py + main.py): the ESPCN sub-pixel network with
orthogonal initialisation and ``nn.PixelShuffle``, trained with MSE and reporting PSNR, then
checkpointed with ``torch.save(model, path)`` and reloaded.

BSDS300 is replaced by random smooth images; the low-resolution input is the image shrunk with
``F.interpolate`` (the example uses PIL resizing)."""
from __future__ import print_function

import argparse
from math import log10

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.init as init
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


class DatasetFromFolder(Dataset):
    def __init__(self, n, crop_size, upscale_factor, seed):
        g = torch.Generator().manual_seed(seed)
        coarse = torch.rand(n, 1, crop_size // 4, crop_size // 4, generator=g)
        self.targets = F.interpolate(coarse, size=(crop_size, crop_size), mode='bicubic',
                                     align_corners=False).clamp_(0, 1)
        self.inputs = F.interpolate(self.targets, scale_factor=1 / upscale_factor,
                                    mode='area')

    def __getitem__(self, index):
        return self.inputs[index], self.targets[index]

    def __len__(self):
        return len(self.targets)


parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
parser.add_argument('--upscale_factor', type=int, default=3)
parser.add_argument('--batchSize', type=int, default=4)
parser.add_argument('--testBatchSize', type=int, default=10)
parser.add_argument('--nEpochs', type=int, default=2)
parser.add_argument('--lr', type=float, default=0.01)
parser.add_argument('--threads', type=int, default=0)
parser.add_argument('--seed', type=int, default=123)
opt = parser.parse_args()
print(opt)

torch.manual_seed(opt.seed)
device = torch.device("cpu")

print('===> Loading datasets')
train_set = DatasetFromFolder(12, 24, opt.upscale_factor, 1)
test_set = DatasetFromFolder(6, 24, opt.upscale_factor, 2)
training_data_loader = DataLoader(dataset=train_set, num_workers=opt.threads,
                                  batch_size=opt.batchSize, shuffle=True)
testing_data_loader = DataLoader(dataset=test_set, num_workers=opt.threads,
                                 batch_size=opt.testBatchSize, shuffle=False)

print('===> Building model')
model = Net(upscale_factor=opt.upscale_factor).to(device)
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=opt.lr)


def train(epoch):
    epoch_loss = 0
    for iteration, batch in enumerate(training_data_loader, 1):
        input, target = batch[0].to(device), batch[1].to(device)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
        print("===> Epoch[{}]({}/{}): Loss: {:.4f}".format(epoch, iteration,
                                                           len(training_data_loader), loss.item()))
    print("===> Epoch {} Complete: Avg. Loss: {:.4f}".format(
        epoch, epoch_loss / len(training_data_loader)))


def test():
    avg_psnr = 0
    with torch.no_grad():
        for batch in testing_data_loader:
            input, target = batch[0].to(device), batch[1].to(device)
            prediction = model(input)
            mse = criterion(prediction, target)
            psnr = 10 * log10(1 / mse.item())
            avg_psnr += psnr
    print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))


def checkpoint(epoch):
    model_out_path = "model_epoch_{}.pth".format(epoch)
    torch.save(model, model_out_path)
    print("Checkpoint saved to {}".format(model_out_path))


for epoch in range(1, opt.nEpochs + 1):
    train(epoch)
    test()
    checkpoint(epoch)

# super_resolve.py: load the whole model and upscale one image
model = torch.load("model_epoch_{}.pth".format(opt.nEpochs), weights_only=False)
out = model(test_set[0][0].unsqueeze(0)).detach()
out_img_y = out[0].numpy()
out_img_y *= 255.0
out_img_y = out_img_y.clip(0, 255)
print('super-resolved', out.shape, round(float(out_img_y.mean()), 3))
