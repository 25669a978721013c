"""Tools that read the autograd graph or wrap every torch function, on PyTorch and on hookgrad.

torch-pruning builds its dependency graph by walking ``grad_fn.next_functions`` and naming the
nodes; torchlens wraps every function of ``torch``, ``Tensor`` and ``nn.functional`` (found by
crawling their ``__all__``/``dir()``) and logs each call. Both run unmodified with only the
import swapped; the libraries are not test dependencies (a test skips without its library).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.ecosystem._tools import array, require_tool, run_with, set_weights

pytestmark = pytest.mark.oracle


def _net(torch):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.c2 = nn.Conv2d(8, 8, 3, padding=1)
            self.c3 = nn.Conv2d(8, 4, 1)
            self.fc = nn.Linear(4 * 4 * 4, 5)

        def forward(self, x):
            h = torch.relu(self.bn(self.c1(x)))
            h = h + torch.relu(self.c2(h))  # a residual: channels of c1 and c2 are coupled
            h = torch.nn.functional.max_pool2d(self.c3(h), 2)
            return self.fc(h.flatten(1))

    m = Net()
    set_weights(torch, m)
    return m


def _prune(torch, tp):
    m, x = _net(torch), array(torch, (2, 3, 8, 8))
    pruner = tp.pruner.MagnitudePruner(m, x, importance=tp.importance.MagnitudeImportance(p=2),
                                       pruning_ratio=0.5, ignored_layers=[m.fc])
    before = tp.utils.count_ops_and_params(m, x)
    pruner.step()
    groups = tp.DependencyGraph().build_dependency(m, example_inputs=x).get_all_groups()
    return (before, tp.utils.count_ops_and_params(m, x), [tuple(p.shape) for p in m.parameters()],
            len(list(groups)), m(x).detach().numpy())


def test_torch_pruning_prunes_the_same_channels():
    require_tool("torch_pruning")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = run_with("torch", ("torch_pruning",), _prune)
        got = run_with("hookgrad", ("torch_pruning",), _prune)
    assert got[:4] == ref[:4]
    np.testing.assert_allclose(got[4], ref[4], rtol=1e-4, atol=1e-5)


def _torchlens_trace(torch, tl):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.fc = nn.Conv2d(1, 2, 3), nn.Linear(18, 3)
            self.register_buffer("steps", torch.tensor(0))
            self.register_buffer("avg", torch.zeros(3))

        def forward(self, x):
            h = torch.relu(self.conv(x)).flatten(1)
            if h.sum() > 0:  # a data-dependent branch
                h = h * 2
            y = self.fc(h).softmax(-1) + x.mean()
            self.steps.add_(1)  # buffers updated in place, as running statistics are
            self.avg.mul_(0.9).add_(y.detach().mean(0), alpha=0.1)
            return y

    m = Net()
    set_weights(torch, m)
    # unwrap when done: torchlens otherwise leaves every torch function wrapped for the rest
    # of the process, which would change what later tests in this process see
    trace = tl.trace(m, array(torch, (2, 1, 5, 5)),
                     capture=tl.options.CaptureOptions(unwrap_when_done=True))
    return [(name, tuple(trace[name].shape), trace[name].func_name,
             trace[name].grad_fn_class_name, tuple(trace[name].parents),
             np.asarray(trace[name].out.detach().numpy(), dtype=np.float64).round(5).tolist())
            for name in trace.layer_labels]


def test_torchlens_logs_the_same_layers():
    """Every op, its name, parents, grad_fn class and value, in-place buffer updates included
    (they were invisible while hookgrad's own Tensor internals were wrappable attributes)."""
    require_tool("torchlens")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = run_with("torch", ("torchlens",), _torchlens_trace)
        got = run_with("hookgrad", ("torchlens",), _torchlens_trace)
    assert [r[:5] for r in got] == [r[:5] for r in ref]
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g[5], r[5], rtol=1e-4, atol=1e-5)
