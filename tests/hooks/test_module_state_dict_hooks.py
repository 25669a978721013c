"""state_dict / load_state_dict hooks and global registration hooks against the oracle:
spec §9-§10, scenarios 82-88 of §15."""

from __future__ import annotations

import pytest

import tests.nn._reset  # noqa: F401  (resets global module hooks after each test)
from tests.hooks._scenario import check

pytestmark = pytest.mark.oracle


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.child = lib.nn.Linear(1, 1)
            self.register_buffer("buf", lib.zeros(1))

    return Net()


# ---------------------------------------------------------------- 82
def sc_state_dict_order(lib, log):
    net = _net(lib)
    for name, m in (("parent", net), ("child", net.child)):
        m.register_state_dict_pre_hook(lambda mod, p, kv, n=name: log.append((n + ".pre", p, kv)))
        m.register_state_dict_post_hook(
            lambda mod, sd, p, md, n=name: log.append((n + ".post", p, list(sd), dict(md))))
    sd = net.state_dict()
    return log, list(sd), dict(sd._metadata)


def test_state_dict_hook_order_nested(torch):
    check(sc_state_dict_order, torch, log=[
        ("parent.pre", "", False), ("child.pre", "child.", False),
        ("child.post", "child.", ["buf", "child.weight", "child.bias"], {"version": 1}),
        ("parent.post", "", ["buf", "child.weight", "child.bias"], {"version": 1})])


# ---------------------------------------------------------------- 83
def sc_post_hook_public_return_raises(lib, log):
    net = _net(lib)
    net.register_state_dict_post_hook(lambda *a: {"x": 1})
    return net.state_dict()


def test_state_dict_post_hook_public_return_raises(torch):
    check(sc_post_hook_public_return_raises, torch, exc="RuntimeError")


def sc_private_root_only(lib, log):
    net = _net(lib)
    net.child._register_state_dict_hook(lambda *a: {"child": "ignored"})
    r1 = list(net.state_dict())
    net._register_state_dict_hook(lambda mod, sd, p, md: {"root": "replaced"})
    r2 = net.state_dict()

    def f(mod, sd, p, md):
        return None

    net.register_state_dict_post_hook(f)
    try:
        net._register_state_dict_hook(f)
    except RuntimeError as e:
        log.append(str(e))
    return r1, r2, log


def test_state_dict_private_post_hook_root_only(torch):
    check(sc_private_root_only, torch)


# ---------------------------------------------------------------- 84
def _lsd_hooks(lib, net, log):
    for name, m in (("parent", net), ("child", net.child)):
        m.register_load_state_dict_pre_hook(
            lambda mod, sd, p, md, strict, mk, uk, em, n=name: log.append(
                (n + ".lpre", p, sorted(sd), strict, list(mk), list(uk))))
        m.register_load_state_dict_post_hook(
            lambda mod, ik, n=name: log.append((n + ".lpost", list(ik.missing_keys),
                                                list(ik.unexpected_keys))))


def sc_load_order_strict_always_true(lib, log):
    net = _net(lib)
    _lsd_hooks(lib, net, log)
    sd = dict(_net(lib).state_dict())
    sd["extra"] = lib.zeros(1)
    del sd["child.bias"]
    r = net.load_state_dict(sd, strict=False)
    return log, repr(r), r.missing_keys, r.unexpected_keys


def test_load_state_dict_pre_post_order_strict_always_true(torch):
    check(sc_load_order_strict_always_true, torch, log=[
        ("parent.lpre", "", ["buf", "child.weight", "extra"], True, [], []),
        ("child.lpre", "child.", ["child.weight"], True, [], ["extra"]),
        ("child.lpost", ["child.bias"], ["extra"]),
        ("parent.lpost", ["child.bias"], ["extra"])])


def sc_load_strict_error(lib, log):
    net = _net(lib)
    sd = dict(_net(lib).state_dict())
    sd["extra"] = lib.zeros(1)
    del sd["child.bias"]
    return net.load_state_dict(sd)


def test_load_state_dict_strict_error_text(torch):
    check(sc_load_strict_error, torch, exc="RuntimeError")


# ---------------------------------------------------------------- 85
def sc_post_hook_clears_keys(lib, log):
    net = _net(lib)

    def clear(mod, ik):
        ik.missing_keys.clear()
        ik.unexpected_keys.clear()

    net.register_load_state_dict_post_hook(clear)
    sd = dict(_net(lib).state_dict())
    sd["extra"] = lib.zeros(1)
    del sd["child.bias"]
    r = net.load_state_dict(sd)
    log.append(repr(r))
    net2 = _net(lib)
    net2.register_load_state_dict_post_hook(lambda mod, ik: ik.missing_keys.append("made-up"))
    try:
        net2.load_state_dict(_net(lib).state_dict())
    except RuntimeError as e:
        log.append(str(e))
    net3 = _net(lib)
    net3.register_load_state_dict_post_hook(lambda mod, ik: "value")
    try:
        net3.load_state_dict(_net(lib).state_dict())
    except AssertionError as e:
        log.append(("assert", str(e)))
    return log


def test_load_state_dict_post_hook_can_clear_keys_and_return_raises(torch):
    check(sc_post_hook_clears_keys, torch)


# ---------------------------------------------------------------- 86
def sc_pre_hook_renames(lib, log):
    net = _net(lib)

    def rename(mod, sd, prefix, md, strict, mk, uk, em):
        if prefix + "old_buf" in sd:
            sd[prefix + "buf"] = sd.pop(prefix + "old_buf")

    net.register_load_state_dict_pre_hook(rename)
    sd = dict(_net(lib).state_dict())
    sd["old_buf"] = lib.full((1,), 7.0)
    del sd["buf"]
    r = net.load_state_dict(sd)
    net._register_load_state_dict_pre_hook(
        lambda sd, p, md, strict, mk, uk, em: log.append(("private", p, strict)))
    net.load_state_dict(net.state_dict())
    return repr(r), net.buf, log


def test_load_state_dict_pre_hook_renames_keys(torch):
    check(sc_pre_hook_renames, torch)


def sc_load_errors(lib, log):
    net = _net(lib)
    try:
        net.load_state_dict([1, 2])
    except TypeError as e:
        log.append(str(e))
    sd = net.state_dict()
    sd["buf"] = lib.zeros(3)
    sd["child.bias"] = "text"
    try:
        net.load_state_dict(sd)
    except RuntimeError as e:
        log.append(str(e).replace("hookgrad", "torch"))
    return log


def test_load_state_dict_error_messages(torch):
    check(sc_load_errors, torch)


def sc_load_assign_and_values(lib, log):
    src = _net(lib)
    with lib.no_grad():
        src.child.weight.fill_(3.0)
    dst = _net(lib)
    w_before = dst.child.weight
    dst.load_state_dict(src.state_dict())
    same_obj = dst.child.weight is w_before
    dst2 = _net(lib)
    dst2.load_state_dict(src.state_dict(), assign=True)
    return (dst.child.weight, same_obj, dst2.child.weight, type(dst2.child.weight).__name__,
            dst2.child.weight.requires_grad)


def test_load_state_dict_copy_and_assign(torch):
    check(sc_load_assign_and_values, torch)


# ---------------------------------------------------------------- 87
def sc_registration_hooks(lib, log):
    mod = lib.nn.modules.module
    hs = [
        mod.register_module_parameter_registration_hook(
            lambda m, n, p: log.append(("param", n))),
        mod.register_module_buffer_registration_hook(
            lambda m, n, b: log.append(("buffer", n, b is None))),
        mod.register_module_module_registration_hook(
            lambda m, n, s: log.append(("module", n, type(s).__name__))),
    ]

    class C(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.ones(1))
            self.register_parameter("nonep", None)
            self.register_buffer("b", lib.ones(1))
            self.register_buffer("nb", None)
            self.sub = lib.nn.ReLU()

    c = C()
    c.b = lib.zeros(2)
    c.sub = None
    try:
        c.register_buffer("bad.name", lib.ones(1))
    except KeyError as e:
        log.append(("err", str(e)))
    c.nb2 = lib.nn.Buffer(lib.ones(1), persistent=False)
    for h in hs:
        h.remove()
    return log, sorted(c.state_dict())


def test_registration_hooks_paths_and_none_handling(torch):
    check(sc_registration_hooks, torch)


# ---------------------------------------------------------------- 88
def sc_registration_chain(lib, log):
    mod = lib.nn.modules.module
    h1 = mod.register_module_parameter_registration_hook(
        lambda m, n, p: (log.append(("h1", n)), lib.nn.Parameter(p.detach() * 2))[1])
    h2 = mod.register_module_parameter_registration_hook(
        lambda m, n, p: (log.append(("h2", p.tolist())), lib.ones(3))[1])
    h3 = mod.register_module_module_registration_hook(lambda m, n, s: lib.nn.Identity())
    h4 = mod.register_module_buffer_registration_hook(lambda m, n, b: lib.full((1,), 9.0))
    m = lib.nn.Module()
    m.p = lib.nn.Parameter(lib.ones(1))
    m.add_module("s", lib.nn.ReLU())
    m.register_buffer("b", lib.zeros(1))
    for h in (h1, h2, h3, h4):
        h.remove()
    return log, type(m.p).__name__, m.p, type(m.s).__name__, m.b


def test_registration_hook_replacement_chain(torch):
    check(sc_registration_chain, torch)
