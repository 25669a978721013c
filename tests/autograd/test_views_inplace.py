"""Views and in-place ops against PyTorch: CopySlices, regenerated views, versions, errors, hooks.

Every scenario takes the library (``torch`` or ``hookgrad``) and returns plain Python values
(graph shapes as nested ``(name, children)`` tuples, lists, exception texts), compared whole.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err

pytestmark = pytest.mark.oracle


def graph(fn, depth=0):
    """A node's graph as nested ``(name, (children...))`` tuples."""
    if fn is None:
        return None
    if depth > 10:
        return "..."
    return (fn.name(), tuple(graph(n, depth + 1) for n, _ in fn.next_functions))


def leaf(lib, shape=(3, 4), seed=0):
    return lib.tensor(np.random.default_rng(seed).normal(size=shape), requires_grad=True)


def weights(lib, t):
    """A fixed cotangent-like weight tensor so every element gets a distinct gradient."""
    return lib.tensor(np.arange(t.numel(), dtype=np.float64).reshape(tuple(t.shape)) + 1)


def same(torch, scenario):
    expected = scenario(torch)
    got = scenario(hookgrad)
    assert got == expected


# ---------------------------------------------------------------------------- CopySlices
def _inplace_on_view(lib):
    a = leaf(lib)
    b = a * 2
    v = b[0]
    out = [b._version, v._version]
    v.mul_(3)
    out += [
        b._version,
        v._version,
        graph(b.grad_fn),
        graph(v.grad_fn),
        v._base is b,
        v._is_view(),
        b.requires_grad,
        v.requires_grad,
    ]
    ((b * weights(lib, b)).sum() + (v * weights(lib, v)).sum()).backward()
    return out + [a.grad.tolist()]


def test_inplace_on_view_gives_copyslices_and_asstrided(torch):
    same(torch, _inplace_on_view)


def _inplace_on_base(lib):
    a = leaf(lib)
    b = a * 2
    v, u = b[1:], b.t()
    b.add_(1)
    out = [graph(v.grad_fn), graph(u.grad_fn), v._version, u._version]
    ((v * weights(lib, v)).sum() + (u * weights(lib, u)).sum()).backward()
    return out + [a.grad.tolist()]


def test_inplace_on_base_regenerates_views(torch):
    same(torch, _inplace_on_base)


def _view_chain(lib):
    a = leaf(lib, (2, 3, 4))
    y = a * 1
    v = y.transpose(0, 2)[1:, ::2]
    v.mul_(2)
    d = y[0].diagonal()
    d.add_(d * 2)
    s = y.as_strided((2, 2), (4, 1), 2)
    s.sub_(1)
    out = [graph(y.grad_fn), graph(v.grad_fn), v._version]
    loss = (y * weights(lib, y)).sum() + (v * weights(lib, v)).sum() + d.sum() + s.sum()
    loss.backward()
    return out + [a.grad.tolist()]


def test_inplace_through_chains_of_views(torch):
    same(torch, _view_chain)


def _view_of_modified_view(lib):
    a = leaf(lib)
    y = a * 1
    v = y[0]
    v.mul_(2)
    w = v[1:]
    out = [graph(w.grad_fn), w._base is y]
    w.add_(1)
    out.append(graph(y.grad_fn))
    (y * weights(lib, y)).sum().backward()
    return out + [a.grad.tolist()]


def test_view_of_a_modified_view(torch):
    same(torch, _view_of_modified_view)


def _versions(lib):
    a = lib.zeros(3, 4)
    v, d, t = a[1:], a.detach(), a.t()
    v.add_(1)
    d.mul_(2)
    t[0] = 3.0
    return [a._version, v._version, d._version, t._version, a.tolist()]


def test_version_counter_is_shared_by_base_views_and_detached(torch):
    same(torch, _versions)


def _nograd_inplace_on_view(lib):
    a = leaf(lib)
    y = a * 1
    v = y[1]
    with lib.no_grad():
        v.mul_(2)
    out = [graph(v.grad_fn), graph(y.grad_fn), y._version]
    ((v * weights(lib, v)).sum() + y.sum()).backward()
    return out + [a.grad.tolist()]


def test_view_modified_under_no_grad_is_regenerated(torch):
    same(torch, _nograd_inplace_on_view)


def _view_of_nongrad_base(lib):
    z = lib.zeros(3, 2, dtype=lib.float64)
    q = leaf(lib, (2,))
    z[1:].copy_(q * 1)
    out = [graph(z.grad_fn), z.requires_grad]
    (z * weights(lib, z)).sum().backward()
    return out + [q.grad.tolist()]


def test_copy_into_view_of_base_without_grad(torch):
    same(torch, _view_of_nongrad_base)


def _older_view_of_base_without_grad(lib):
    log = []
    z = lib.zeros(3, 2)
    older = z[0]
    untouched = lib.zeros(3, 2)[0]
    z[1:] = lib.ones(2, requires_grad=True) * 1
    log.append((z.requires_grad, older.requires_grad, older.is_leaf, untouched.requires_grad))
    log.append(older.grad_fn.name())  # regenerated from the base's new graph, as in PyTorch
    (older * 2).sum().backward()
    return log


def test_older_view_of_base_without_grad_requires_grad_through_base(torch):
    same(torch, _older_view_of_base_without_grad)


# ---------------------------------------------------------------------------- __setitem__
SET_INDICES = [
    0,
    (0, 1),
    slice(1, None),
    (slice(None), 1),
    Ellipsis,
    slice(None),
    None,
    (None, 0),
    [0, 2],
    (0, [1, 2]),
    (slice(None), [0, 1]),
    True,
    (..., 2),
]


@pytest.mark.parametrize("index", SET_INDICES, ids=repr)
def test_setitem_tensor_value_matches_torch(torch, index):
    def scenario(lib):
        a, c = leaf(lib), leaf(lib, (4,), 1)
        y = a * 1
        target = y[index]
        value = c * 1 if target.dim() and target.shape[-1] == 4 else c.sum() * 1
        y[index] = value
        (y * weights(lib, y)).sum().backward()
        return [graph(y.grad_fn), y._version, a.grad.tolist(), c.grad.tolist()]

    same(torch, scenario)


@pytest.mark.parametrize(
    "index",
    [
        0,
        (0, 1),
        slice(1, None),
        Ellipsis,
        slice(None),
        None,
        [0, 2],
        (0, [1, 2]),
        "mask",
        "row_mask",
    ],
    ids=repr,
)
def test_setitem_scalar_value_matches_torch(torch, index):
    def scenario(lib):
        a = leaf(lib)
        y = a * 1
        idx = index
        if index == "mask":
            idx = y > 0
        elif index == "row_mask":
            idx = lib.tensor([True, False, True])
        y[idx] = 5.0
        (y * weights(lib, y)).sum().backward()
        return [graph(y.grad_fn), y._version, a.grad.tolist(), y.tolist()]

    same(torch, scenario)


def _setitem_into_nongrad(lib):
    out = lib.zeros(3, 4, dtype=lib.float64)
    x = leaf(lib)
    for i in range(3):
        out[i] = x[i] * (i + 1)
    out[out > 1] = 0.0
    (out * weights(lib, out)).sum().backward()
    return [graph(out.grad_fn), out._version, x.grad.tolist()]


def test_setitem_loop_into_buffer(torch):
    same(torch, _setitem_into_nongrad)


def _setitem_broadcast_value(lib):
    a, c = leaf(lib), leaf(lib, (1, 1, 4), 2)
    y = a * 1
    y[1:] = c
    y[:, [0, 3]] = c[0, 0, :2] * 2
    (y * weights(lib, y)).sum().backward()
    return [graph(y.grad_fn), a.grad.tolist(), c.grad.tolist()]


def test_setitem_broadcasts_value_with_view_and_expand(torch):
    same(torch, _setitem_broadcast_value)


# ---------------------------------------------------------------------------- errors
def _errors(lib):
    a = leaf(lib)
    out = [err(lambda: a[0].mul_(2)), err(lambda: a.mul_(2))]

    def set_basic():
        a[0] = 1.0

    def set_advanced():
        a[[0]] = 1.0

    out += [err(set_basic), err(set_advanced)]
    y = a * 1
    out.append(err(lambda: y.unbind(0)[0].mul_(2)))
    out.append(err(lambda: y.split(1)[0].mul_(2)))
    out.append(err(lambda: y.chunk(2)[1][0].mul_(2)))
    with lib.no_grad():
        v = y[0]
    out.append(err(lambda: v.mul_(2)))
    y2 = a * 1
    parts = y2.unbind(0)
    y2.mul_(2)
    out.append(err(lambda: parts[1].grad_fn))
    out.append(err(lambda: parts[1].sum()))
    z = lib.zeros(3, 2, dtype=lib.float64)
    rows = z.unbind(0)
    out.append(err(lambda: rows[0].copy_(leaf(lib, (2,)))))
    e = lib.zeros(1, 3).expand(2, 3)
    out.append(err(lambda: e.copy_(lib.ones(2, 3))))
    return out


def test_inplace_errors_match_torch(torch):
    same(torch, _errors)


def test_inplace_on_views_allowed_under_no_grad(torch):
    def scenario(lib):
        a = leaf(lib)
        with lib.no_grad():
            a[0] = 1.0
            a.unbind(0)[1].mul_(0)
        return [a.tolist(), a._version, a.grad_fn is None]

    same(torch, scenario)


# ---------------------------------------------------------------------------- hooks
def _hooks_around_inplace_on_view(lib):
    log = []
    a = leaf(lib)
    y = a * 1
    v = y[0]
    v.register_hook(lambda g: log.append(("v-before", g.tolist())))
    y.register_hook(lambda g: log.append(("y-before", g.tolist())))
    v.mul_(2)
    y.register_hook(lambda g: log.append(("y-after", g.tolist())))
    v.register_hook(lambda g: log.append(("v-after", g.tolist())))
    ((y * weights(lib, y)).sum() + v.sum()).backward()
    return log + [a.grad.tolist()]


def test_hooks_registered_before_inplace_on_view_see_old_value(torch):
    same(torch, _hooks_around_inplace_on_view)


def _hooks_on_view_when_base_modified(lib):
    log = []
    a = leaf(lib)
    y = a * 1
    v = y[1:]
    v.register_hook(lambda g: log.append(("v-before", g.tolist())))
    y.mul_(2)
    v.register_hook(lambda g: log.append(("v-after", g.tolist())))
    (v * weights(lib, v)).sum().backward()
    return log + [a.grad.tolist()]


def test_hooks_on_view_follow_regeneration(torch):
    same(torch, _hooks_on_view_when_base_modified)


def _retain_grad(lib):
    a = leaf(lib)
    y = a * 1
    v = y[0]
    y.retain_grad()
    v.retain_grad()
    v.mul_(3)
    (y.sum() + (v * weights(lib, v)).sum()).backward()
    return [y.grad.tolist(), v.grad.tolist(), a.grad.tolist(), y.retains_grad, v.retains_grad]


def test_retain_grad_follows_base_and_view(torch):
    same(torch, _retain_grad)


def _node_hooks_on_copyslices(lib):
    log = []
    a = leaf(lib)
    y = a * 1
    y[0] = a[1] * 2
    y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", [g is None for g in gi])))
    y.sum().backward()
    return log + [a.grad.tolist()]


def test_node_hooks_on_copyslices(torch):
    same(torch, _node_hooks_on_copyslices)


# ---------------------------------------------------------------------------- higher order
def _double_backward(lib):
    a = leaf(lib)
    y = a * a
    y[0] = a[1] * a[2]
    v = y[1:]
    v.mul_(v.detach() + 1)
    (g,) = lib.autograd.grad((y * weights(lib, y)).sum(), a, create_graph=True)
    (g2,) = lib.autograd.grad((g * g).sum(), a)
    return [g.tolist(), g2.tolist()]


def test_double_backward_through_copyslices(torch):
    same(torch, _double_backward)


def _grad_with_inputs(lib):
    a, b = leaf(lib), leaf(lib, (4,), 1)
    y = a * 1
    y[1] = b * 3
    ga, gb = lib.autograd.grad((y * weights(lib, y)).sum(), (a, b), retain_graph=True)
    (gb_only,) = lib.autograd.grad((y * y).sum(), b)
    return [ga.tolist(), gb.tolist(), gb_only.tolist()]


def test_autograd_grad_through_copyslices(torch):
    same(torch, _grad_with_inputs)


def test_copyslices_saved_version_check(torch):
    def scenario(lib):
        a = leaf(lib)
        y = a * 1
        v = y[0]
        v.mul_(a[1])
        y.add_(1)  # y is not saved by mul_: fine
        z = v * v
        v.add_(1)  # v is saved by z's node
        return err(lambda: z.sum().backward())[0]

    same(torch, scenario)


# ---------------------------------------------------------------------------- more chains
def _stale_view_then_inplace(lib):
    a = leaf(lib)
    y = a * 1
    v = y[0]
    y.mul_(2)
    v.add_(a[1])
    out = [graph(y.grad_fn), graph(v.grad_fn)]
    (y * weights(lib, y)).sum().backward()
    return out + [a.grad.tolist()]


def _transposed_and_strided_writes(lib):
    a = leaf(lib)
    y = a * 1
    y.T[0] = a[:, 1] * 3
    y[::2].zero_()
    y.diagonal().copy_(a[0, :3])
    out = [graph(y.grad_fn)]
    (y * weights(lib, y)).sum().backward()
    return out + [a.grad.tolist()]


def _multi_input_inplace_on_view(lib):
    a, b = leaf(lib), leaf(lib, (4,), 2)
    y = a * 1
    v = y[1]
    v.mul_(b)
    v.div_(b + 3)
    v.sub_(b, alpha=2)
    (y * weights(lib, y)).sum().backward()
    return [graph(y.grad_fn), a.grad.tolist(), b.grad.tolist()]


def _saved_hooks_in_copyslices(lib):
    log = []
    a, b = leaf(lib), leaf(lib, (4,), 2)
    y = a * 1

    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return t

    def unpack(t):
        log.append("unpack")
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y[0].mul_(b)
    (y * weights(lib, y)).sum().backward()
    return [log, a.grad.tolist(), b.grad.tolist()]


@pytest.mark.parametrize(
    "scenario",
    [
        _stale_view_then_inplace,
        _transposed_and_strided_writes,
        _multi_input_inplace_on_view,
        _saved_hooks_in_copyslices,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_more_inplace_chains_match_torch(torch, scenario):
    same(torch, scenario)
