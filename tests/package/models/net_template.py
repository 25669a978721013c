"""A model with hooks, written once for both libraries (``LIB`` is replaced by the tests)."""
import LIB as torch
from LIB import nn


def double_output(module, args, output):
    return output * 2


def shift_input(module, args):
    return (args[0] + 1,)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)
        self.same = self.fc2  # one module reachable twice
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 3))
        self.fc1.register_forward_hook(double_output)
        self.register_forward_pre_hook(shift_input)

    def forward(self, x):
        return self.same(torch.relu(self.fc1(x))) * self.scale
