"""The PyTorch "Pruning Tutorial": ``prune.random_unstructured``, ``l1_unstructured``,
``ln_structured``, iterative pruning and ``PruningContainer`` history, ``remove``,
``global_unstructured`` over a LeNet, and a custom ``BasePruningMethod``; checks the masks,
buffers, forward pre-hooks and the state dict keys, then trains the pruned net a few steps."""
import torch
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch import nn

torch.manual_seed(7)


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square conv kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5x5 image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


model = LeNet()
module = model.conv1
print(list(module.named_parameters())[0][0], list(module.named_buffers()))
prune.random_unstructured(module, name="weight", amount=0.3)
print([n for n, _ in module.named_parameters()], [n for n, _ in module.named_buffers()])
print('random mask zeros', int((module.weight_mask == 0).sum()))
print('hooks', [type(h).__name__ for h in module._forward_pre_hooks.values()])
prune.l1_unstructured(module, name="bias", amount=3)
print('bias', module.bias.tolist() == (module.bias_orig * module.bias_mask).tolist(),
      int((module.bias == 0).sum()))
prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
print('structured zero channels', int((module.weight.abs().sum(dim=(1, 2, 3)) == 0).sum()))
for hook in module._forward_pre_hooks.values():
    if hook._tensor_name == "weight":
        break
print('history', [type(m).__name__ for m in hook])
print(sorted(model.state_dict().keys()))
prune.remove(module, 'weight')
print('after remove', [n for n, _ in module.named_parameters()],
      [n for n, _ in module.named_buffers()])

new_model = LeNet()
for name, module in new_model.named_modules():
    if isinstance(module, torch.nn.Conv2d):
        prune.l1_unstructured(module, name='weight', amount=0.2)
    elif isinstance(module, torch.nn.Linear):
        prune.l1_unstructured(module, name='weight', amount=0.4)
print(dict(new_model.named_buffers()).keys())

model = LeNet()
parameters_to_prune = ((model.conv1, 'weight'), (model.conv2, 'weight'), (model.fc1, 'weight'),
                       (model.fc2, 'weight'), (model.fc3, 'weight'))
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
for m, _ in parameters_to_prune:
    print("Sparsity: {:.2f}%".format(100. * float(torch.sum(m.weight == 0)) /
                                     float(m.weight.nelement())))
print("Global sparsity: {:.2f}%".format(
    100. * float(sum(torch.sum(m.weight == 0) for m, _ in parameters_to_prune))
    / float(sum(m.weight.nelement() for m, _ in parameters_to_prune))))


class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor"""
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


model = LeNet()
foobar_unstructured(model.fc3, name='bias')
print(model.fc3.bias_mask)

# train the globally pruned net: pruned weights stay zero, as the masks are applied in forward
model = LeNet()
prune.global_unstructured(((model.fc1, 'weight'), (model.conv2, 'weight')),
                          pruning_method=prune.L1Unstructured, amount=0.5)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(8, 1, 32, 32), torch.randint(0, 10, (8,))
for step in range(3):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 5), int((model.fc1.weight == 0).sum()),
          int((model.fc1.weight_orig.grad == 0).sum()))
