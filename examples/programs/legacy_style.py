"""An old-style (PyTorch 0.3/0.4-era) training script of the kind still copied from blog posts
and early pytorch/examples revisions: ``Variable`` (with ``volatile``), ``torch.FloatTensor`` /
``torch.LongTensor`` constructors and ``.type(dtype)``, ``F.log_softmax`` and ``nn.Softmax``
without ``dim``, ``F.sigmoid``/``F.tanh``, ``F.upsample``, ``nn.init.xavier_uniform``,
``clip_grad_norm`` (no underscore), ``size_average``/``reduce`` loss arguments, ``loss.data``,
``torch.randperm``-based batching, and ``model.cuda()`` guarded by ``torch.cuda.is_available()``."""
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable

warnings.simplefilter('ignore')  # the script predates the deprecations it triggers
torch.manual_seed(1)
np.random.seed(1)
use_cuda = torch.cuda.is_available()
dtype = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(4 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 3)
        nn.init.xavier_uniform(self.fc1.weight)
        nn.init.constant(self.fc1.bias, 0.1)
        self.soft = nn.Softmax()

    def forward(self, x):
        x = F.upsample(x, scale_factor=2, mode='nearest')
        x = F.max_pool2d(F.relu(self.conv1(x)), 4)
        x = x.view(-1, 4 * 4 * 4)
        x = F.tanh(self.fc1(x))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x))


data = torch.FloatTensor(np.random.rand(40, 1, 8, 8).astype(np.float32))
target = torch.LongTensor(np.random.randint(0, 3, 40))
model = Net()
if use_cuda:
    model.cuda()
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

for epoch in range(1, 3):
    model.train()
    perm = torch.randperm(40)
    for i in range(0, 40, 10):
        idx = perm[i:i + 10]
        x, y = Variable(data[idx].type(dtype)), Variable(target[idx])
        optimizer.zero_grad()
        output = model(x)
        loss = F.nll_loss(output, y, size_average=True)
        loss.backward()
        nn.utils.clip_grad_norm(model.parameters(), 1.0)
        optimizer.step()
        print('epoch {} batch {} loss {:.6f}'.format(epoch, i // 10, loss.data.item()))
    model.eval()
    x = Variable(data.type(dtype), volatile=True)
    output = model(x)
    test_loss = F.nll_loss(output, Variable(target), size_average=False).data.item() / 40
    pred = output.data.max(1)[1]
    correct = pred.eq(target.view_as(pred)).cpu().sum()
    print('test loss {:.4f} correct {}'.format(test_loss, int(correct)))

probs = model.soft(model.fc2(F.sigmoid(model.fc1(Variable(data[:2].view(2, -1)[:, :64])))))
print('probs', [round(v, 5) for v in probs.data.view(-1).tolist()])
mse = nn.MSELoss(reduce=False)(Variable(torch.ones(3)), Variable(torch.zeros(3)))
print('unreduced', mse.data.tolist(), Variable(torch.Tensor(2, 3).zero_()).size())
