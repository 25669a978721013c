"""micrograd's test_engine.py: the two expressions micrograd checks against PyTorch, computed
with PyTorch (float64 tensors, ``.double()``, ``requires_grad = True``, ``retain_grad``)."""
import torch

x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
print('sanity', ypt.data.item(), xpt.grad.item())

a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b**3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e**2
g = f / 2.0
g = g + 10.0 / f
g.backward()
print('more ops', '%.10f' % g.data.item(), '%.10f' % a.grad.item(), '%.10f' % b.grad.item())

# micrograd's demo: a tiny MLP on two moons, with an SVM max-margin loss and L2 regularisation
torch.manual_seed(1337)
X = torch.randn(40, 2, dtype=torch.float64)
y = (X[:, 0] * X[:, 1] > 0).double() * 2 - 1
model = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16),
                            torch.nn.ReLU(), torch.nn.Linear(16, 1)).double()
for k in range(15):
    scores = model(X).squeeze(1)
    losses = (1 + -y * scores).relu()
    data_loss = losses.mean()
    reg_loss = 1e-4 * sum((p * p).sum() for p in model.parameters())
    total_loss = data_loss + reg_loss
    accuracy = ((y > 0) == (scores > 0)).double().mean()
    model.zero_grad()
    total_loss.backward()
    learning_rate = 1.0 - 0.9 * k / 100
    for p in model.parameters():
        p.data -= learning_rate * p.grad
    if k % 5 == 0:
        print(f"step {k} loss {total_loss.item()}, accuracy {accuracy.item()*100}%")
