"""The eager-semantics classes found by differential fuzzing, each checked as a class.

1. in-place ops on a tensor that does not require grad, with an operand that does;
2. view / leaf flags of views taken with grad mode off;
3. post-accumulate-grad hooks that return a value;
4. result layouts of indexing ops.
(Saved-value lists per rule: ``tests/ops/test_opspec_saved_hooks.py``.)
"""

from __future__ import annotations

import pytest

from hookgrad.testing._oracle import assert_same

pytestmark = pytest.mark.oracle


def _ops(t, w):
    return {
        "add_": lambda: t.add_(w), "sub_": lambda: t.sub_(w, alpha=2), "mul_": lambda: t.mul_(w),
        "div_": lambda: t.div_(w + 3), "pow_": lambda: t.pow_(w),
        "addcmul_": lambda: t.addcmul_(w, w, value=0.5),
        "addcdiv_": lambda: t.addcdiv_(w, w + 3), "lerp_": lambda: t.lerp_(w, 0.3),
        "copy_": lambda: t.copy_(w), "maximum": lambda: t.clamp_(min=w),
        "atan2_": lambda: t.atan2_(w), "masked_fill_": lambda: t.masked_fill_(t > 1.2, w.sum()),
        "setitem": lambda: t.__setitem__(slice(0, 2), w[:2]),
        "index_put_": lambda: t.index_put_((t.new_tensor([0, 2]).long(),), w[:2]),
        "where": lambda: t.copy_(w.where(t > 1.1, t)),
    }


OPS = list(_ops(None, None))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("target", ["plain", "view", "expanded_base"])
def test_inplace_on_constant_with_grad_operand(torch, op, target):
    def scenario(lib, log):
        w = lib.tensor([0.5, 1.5, 2.5], requires_grad=True)
        base = lib.tensor([[1.0, 1.25, 1.5], [2.0, 2.5, 3.0]]) + 0
        t = {"plain": base[0].clone(), "view": base[1], "expanded_base": base[:, 1:].t()[0]}[target]
        if target == "expanded_base":
            w = w[:2]
        _ops(t, w)[op]()
        log.append((t.requires_grad, t.is_leaf, type(t.grad_fn).__name__ != "NoneType"))
        log.append(None if t.grad_fn is None else t.grad_fn.name())
        (t * t).sum().backward(retain_graph=True)
        log.append(w.grad)
        if target != "plain":
            base.sum().backward()
            log.append((base.grad_fn.name(), w.grad))
        return t

    assert_same(scenario, torch)


def _view_fns():
    return {
        "slice": lambda x: x[:2], "view": lambda x: x.view(3, 2), "t": lambda x: x.t(),
        "expand": lambda x: x.expand(2, 2, 3), "unbind": lambda x: x.unbind()[1],
        "split": lambda x: x.split(1)[0], "reshape": lambda x: x.reshape(6),
        "diagonal": lambda x: x.diagonal(), "select": lambda x: x[1],
        "detach": lambda x: x.detach(), "alias": lambda x: x[...],
        "unsqueeze": lambda x: x.unsqueeze(0), "as_strided": lambda x: x.as_strided((2,), (1,)),
    }


MODES = {
    "no_grad": lambda lib: lib.no_grad(),
    "set_grad_enabled": lambda lib: lib.set_grad_enabled(False),
    "inference_mode": lambda lib: lib.inference_mode(),
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("view", list(_view_fns()))
@pytest.mark.parametrize("source", ["leaf", "nonleaf"])
def test_view_flags_under_grad_modes(torch, mode, view, source):
    def scenario(lib, log):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        src = x if source == "leaf" else x * 2
        with MODES[mode](lib):
            v = _view_fns()[view](src)
        log.append((v.requires_grad, v.is_leaf, v.grad_fn is None, v.retains_grad))
        if v.requires_grad:
            v.retain_grad()
            log.append(v.retains_grad)
            v.register_hook(lambda g: log.append(("hook", g)))
            out = (v * 3).sum()
            log.append((out.requires_grad, [n is None for n, _ in out.grad_fn.next_functions]))
            out.backward()
            log.append((v.grad, x.grad))
            v.requires_grad_(False)
            log.append(v.requires_grad)

    assert_same(scenario, torch)


def test_view_made_without_graph_asking_for_its_own_grad(torch):
    def scenario(lib, log):
        x = lib.ones(3, requires_grad=True)
        with lib.no_grad():
            v = x[:2]
            u = v[:1]
        v.requires_grad_(True)
        (v * 3).sum().backward()
        (u * 2).sum().backward()
        log.append((v.grad, u.grad, x.grad))
        log.append(lib.autograd.grad((u * 3).sum(), u, allow_unused=True))

    assert_same(scenario, torch)


RETURNS = {
    "none": lambda lib, t: None, "itself": lambda lib, t: t, "int": lambda lib, t: 5,
    "tuple": lambda lib, t: (t,), "grad": lambda lib, t: t.grad, "detach": lambda lib, t: t.detach(),
    "other_size": lambda lib, t: lib.ones(5), "other_dtype": lambda lib, t: t.double(),
}


@pytest.mark.parametrize("ret", list(RETURNS))
def test_post_accumulate_hook_return_values(torch, ret):
    def scenario(lib, log):
        x = lib.ones(3, requires_grad=True)
        y = lib.ones(3, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: (log.append("x1"), RETURNS[ret](lib, t))[1])
        x.register_post_accumulate_grad_hook(lambda t: log.append(("x2", t.shape)))
        x.register_post_accumulate_grad_hook(lambda t: (log.append("x3"), t)[1])
        x.register_hook(lambda g: log.append("x.pre"))
        y.register_post_accumulate_grad_hook(lambda t: log.append("y1"))
        try:
            (x * 2 + y * 3).sum().backward()
        finally:
            log.append((x.grad, y.grad))

    assert_same(scenario, torch)


INDEXERS = {
    "cols": lambda lib, x: x[:, [0, 1]],
    "rows": lambda lib, x: x[[0, 1]],
    "mid": lambda lib, x: x[:, [1, 0], :],
    "pair": lambda lib, x: x[:, [0, 1], [1, 0]],
    "split_pair": lambda lib, x: x[[0, 1], :, [1, 2]],
    "matrix_index": lambda lib, x: x[..., [[0, 1], [2, 0]]],
    "mask": lambda lib, x: x[:, x.new_ones(x.shape[1:]).bool()],
    "mask_row": lambda lib, x: x[x.new_tensor([True, False, True]).bool()],
    "int_and_list": lambda lib, x: x[0, :, [0, 1]],
    "none_and_list": lambda lib, x: x[None, :, [1]],
    "index_select": lambda lib, x: x.index_select(1, lib.tensor([0, 2])),
    "gather": lambda lib, x: x.gather(0, lib.zeros(2, 2, 2, dtype=lib.long)),
    "take": lambda lib, x: x.take(lib.tensor([[0, 1], [2, 3], [4, 5]]).t()),
    "masked_select": lambda lib, x: x.masked_select(x > 2),
    "index_put": lambda lib, x: x.index_put((lib.tensor([0, 1]),), x[0, 0, 0]),
}
LAYOUTS = {
    "contiguous": lambda x: x,
    "permuted": lambda x: x.permute(2, 0, 1),
    "transposed": lambda x: x.transpose(0, 1),
    "sliced": lambda x: x[:, :, ::2],
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("indexer", list(INDEXERS))
def test_index_result_layouts(torch, indexer, layout):
    def scenario(lib, log):
        x = LAYOUTS[layout](lib.arange(48.0).reshape(3, 4, 4))
        y = INDEXERS[indexer](lib, x)
        log.append((y.shape, y.stride(), y.is_contiguous()))
        z = y.contiguous()
        z.add_(1)
        log.append(y.sum())  # does the write through contiguous() alias the result?
        return y

    assert_same(scenario, torch)
