"""`autograd.Function` against the oracle: values, gradients, nodes, hooks, errors (NOTE [Custom
Function nodes] in ``hookgrad/autograd/function.py``).

Every scenario takes the library as ``lib`` and runs unchanged on PyTorch and hookgrad; classes
are defined inside the scenario so each library gets its own ``Function`` subclass.
"""

from __future__ import annotations

import pytest

import hookgrad
from hookgrad.testing._oracle import assert_same

pytestmark = pytest.mark.oracle


def _fns(lib):
    """A few Function classes built on `lib` (defined per library)."""
    F = lib.autograd.Function

    class Scale(F):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.save_for_backward(x)
            ctx.fwd_grad_mode = lib.is_grad_enabled()
            ctx.fwd_needs = ctx.needs_input_grad
            return x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            ctx.bwd_needs = ctx.needs_input_grad
            return g * ctx.k, None

    class Cube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x * x * 3

    class Ident(F):
        @staticmethod
        def forward(ctx, *xs):
            return xs if len(xs) > 1 else xs[0]

        @staticmethod
        def backward(ctx, *gs):
            return gs

    return Scale, Cube, Ident


def _L(values):  # noqa: N802 - the spec's name
    return [None if v is None else v.tolist() for v in values]


# ---------------------------------------------------------------------------------- basics
def _basic(lib, log):
    Scale, _, _ = _fns(lib)
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = Scale.apply(a, 3.0)
    n = y.grad_fn
    log += [type(n).__name__, n.name(), n.k, n.fwd_grad_mode, n.fwd_needs,
            len(n.next_functions), n.next_functions[0][0].name(), n.next_functions[0][1],
            isinstance(n, lib.autograd.graph.Node), y.requires_grad, y.is_leaf]
    y.sum().backward()
    log += [n.bwd_needs, a.grad]
    return y


def test_basic_forward_backward_and_node(torch):
    assert_same(_basic, torch)


def _sequence_numbers(lib, log):
    Scale, _, _ = _fns(lib)
    a = lib.ones(2, requires_grad=True)
    s0 = (a * 1).grad_fn._sequence_nr()
    Scale.apply(lib.ones(2), 2.0)  # nothing requires grad: still consumes a number
    s1 = (a * 1).grad_fn._sequence_nr()
    with lib.no_grad():
        Scale.apply(a, 2.0)
    s2 = (a * 1).grad_fn._sequence_nr()
    y = Scale.apply(a, 2.0)
    s3 = (a * 1).grad_fn._sequence_nr()
    log += [s1 - s0, s2 - s1, s3 - s2, y.grad_fn._sequence_nr() - s2]


def test_apply_consumes_one_sequence_number(torch):
    assert_same(_sequence_numbers, torch)


def _no_grad_inputs(lib, log):
    Scale, _, _ = _fns(lib)
    y = Scale.apply(lib.ones(2), 2.0)
    log += [y.requires_grad, y.grad_fn]
    a = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        z = Scale.apply(a, 2.0)
    log += [z.requires_grad, z.grad_fn]


def test_no_node_without_grad(torch):
    assert_same(_no_grad_inputs, torch)


def _edges(lib, log):
    F = lib.autograd.Function

    class Mix(F):
        @staticmethod
        def forward(ctx, x, c, k, y):
            log.append(ctx.needs_input_grad)
            return x * c * k + y

        @staticmethod
        def backward(ctx, g):
            return g, None, None, g

    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True) * 2
    out = Mix.apply(a, lib.ones(2), 3, b)
    log.append([(None if f is None else f.name(), nr) for f, nr in out.grad_fn.next_functions])
    out.sum().backward()
    return a.grad


def test_non_tensor_inputs_get_no_edge(torch):
    assert_same(_edges, torch)


def _setup_context(lib, log):
    F = lib.autograd.Function

    class Sq(F):
        @staticmethod
        def forward(x, k=2.0):
            log.append(("forward", lib.is_grad_enabled()))
            return x * x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            log.append(("setup", len(inputs), inputs[1], lib.is_grad_enabled()))
            ctx.save_for_backward(inputs[0])
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x * ctx.k, None

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = Sq.apply(a)
    z = Sq.apply(a, k=3.0)
    (y + z).sum().backward()
    return y, z, a.grad, y.grad_fn.name()


def test_setup_context_style(torch):
    assert_same(_setup_context, torch)


def _kwargs(lib, log):
    F = lib.autograd.Function

    class K(F):
        @staticmethod
        def forward(ctx, x, scale=1.0):
            return x * scale

        @staticmethod
        def backward(ctx, g):
            return g, None

    a = lib.ones(2, requires_grad=True)
    y = K.apply(a, scale=5.0)
    return y, len(y.grad_fn.next_functions)


def test_forward_kwargs(torch):
    assert_same(_kwargs, torch)


# ---------------------------------------------------------------------------------- backward checks
def _bad_backward(kind):
    def scenario(lib, log):
        F = lib.autograd.Function

        class Bad(F):
            @staticmethod
            def forward(ctx, x, k):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                if kind == "too_few":
                    return g
                if kind == "extra_nones":
                    return g, None, None, None
                if kind == "grad_for_non_tensor":
                    return g, g
                if kind == "not_a_tensor":
                    return 3, None
                if kind == "wrong_shape":
                    return lib.ones(3), None
                return g.sum(), None  # broadcastable: reduced by the engine

        a = lib.ones(2, requires_grad=True)
        Bad.apply(a, 3).sum().backward()
        return a.grad

    return scenario


@pytest.mark.parametrize("kind", ["too_few", "extra_nones", "grad_for_non_tensor",
                                  "not_a_tensor", "wrong_shape", "broadcastable"])
def test_backward_return_validation(torch, kind):
    assert_same(_bad_backward(kind), torch)


def _not_implemented(which):
    def scenario(lib, log):
        F = lib.autograd.Function
        if which == "forward":
            class NoFwd(F):
                pass

            return NoFwd.apply(lib.ones(2, requires_grad=True))
        if which == "backward":
            class NoBwd(F):
                @staticmethod
                def forward(ctx, x):
                    return x * 2

            NoBwd.apply(lib.ones(2, requires_grad=True)).sum().backward()
        return F.jvp(None)

    return scenario


@pytest.mark.parametrize("which", ["forward", "backward", "jvp"])
def test_missing_methods_raise_not_implemented(torch, which):
    assert_same(_not_implemented(which), torch)


def test_instantiating_a_function_warns_and_calling_raises():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        fn = hookgrad.autograd.Function()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        fn(hookgrad.ones(1))


# ---------------------------------------------------------------------------------- views
def _returned_input(which):
    def scenario(lib, log):
        _, _, Ident = _fns(lib)
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        x = a if which == "leaf" else a * 1
        y = Ident.apply(x)
        log += [y is x, y._is_view(), y._base is x, y.grad_fn.name(), y.requires_grad]
        try:
            y.mul_(2)
        except RuntimeError as e:
            log.append(str(e))
        (y * 3).sum().backward()
        return a.grad

    return scenario


@pytest.mark.parametrize("which", ["leaf", "nonleaf"])
def test_input_returned_as_is_is_a_view_that_forbids_inplace(torch, which):
    assert_same(_returned_input(which), torch)


def _multi_views(lib, log):
    _, _, Ident = _fns(lib)
    x = lib.ones(2, requires_grad=True) * 1
    c = lib.ones(2)
    o0, o1 = Ident.apply(x, c)
    log += [o0.requires_grad, o1.requires_grad, o0._is_view(), o1._is_view()]
    for o in (o0, o1):
        try:
            o.mul_(2)
        except RuntimeError as e:
            log.append(str(e))


def test_several_differentiable_view_outputs_use_multi_view_error(torch):
    assert_same(_multi_views, torch)


def _view_made_in_forward(lib, log):
    F = lib.autograd.Function

    class V(F):
        @staticmethod
        def forward(ctx, x):
            return x.view(4)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2)

    x = lib.ones(2, 2, requires_grad=True) * 1
    y = V.apply(x)
    log += [y._is_view(), y._base is x, y.grad_fn.name()]
    try:
        y.add_(1)
    except RuntimeError as e:
        log.append(str(e))
    z = y * 1
    z.add_(1)  # not a view: fine
    z.sum().backward()


def test_view_created_in_forward_forbids_inplace(torch):
    assert_same(_view_made_in_forward, torch)


def _base_modified(lib, log):
    _, _, Ident = _fns(lib)
    b = lib.ones(2, requires_grad=True) * 1
    y = Ident.apply(b)
    b.mul_(2)
    try:
        log.append(y.grad_fn)
    except RuntimeError as e:
        log.append(str(e))


def test_view_output_after_base_modified_raises(torch):
    assert_same(_base_modified, torch)


# ---------------------------------------------------------------------------------- mark_dirty
def _dirty(lib, log):
    F = lib.autograd.Function

    class Dbl(F):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    b.register_hook(lambda g: log.append(("old", g.tolist())))
    v0 = b._version
    y = Dbl.apply(b)
    b.register_hook(lambda g: log.append(("new", g.tolist())))
    log += [y is b, b._version - v0, b.grad_fn.name(), b._is_view(), b]
    (b * 3).sum().backward()
    return a.grad


def test_mark_dirty_moves_input_onto_node(torch):
    assert_same(_dirty, torch)


def _dirty_errors(which):
    def scenario(lib, log):
        F = lib.autograd.Function

        class D(F):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                if which == "not_input":
                    r = x * 1
                    ctx.mark_dirty(r)
                    return r
                ctx.mark_dirty(x)
                return x * 1 if which == "not_returned" else x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        a = lib.ones(2, requires_grad=True)
        src = a if which == "leaf" else a * 1
        out = D.apply(src)
        return out, src.grad_fn

    return scenario


@pytest.mark.parametrize("which", ["leaf", "not_returned", "not_input"])
def test_mark_dirty_errors(torch, which):
    assert_same(_dirty_errors(which), torch)


# ---------------------------------------------------------------------------------- outputs
def _non_differentiable(lib, log):
    F = lib.autograd.Function

    class ND(F):
        @staticmethod
        def forward(ctx, x):
            r = x * 2
            ctx.mark_non_differentiable(r)
            return x.sum(), x.to(lib.int64), r, 7

        @staticmethod
        def backward(ctx, gs, gi, gr, g7):
            log.append(("bw", _L([gs, gi, gr]), g7, gi.dtype))
            return gs * lib.ones(2)

    x = lib.tensor([1.0, 3.0], requires_grad=True)
    s, i, r, seven = ND.apply(x)
    log += [s.requires_grad, i.requires_grad, r.requires_grad, r.grad_fn, seven]
    s.backward()
    return x.grad


def test_non_differentiable_outputs_get_zero_gradients(torch):
    assert_same(_non_differentiable, torch)


def _materialize(flag):
    def scenario(lib, log):
        F = lib.autograd.Function

        class Two(F):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(flag)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g0, g1):
                log.append(_L([g0, g1]))
                return g0 if g1 is None else g0 + g1

        x = lib.ones(2, requires_grad=True)
        y0, _ = Two.apply(x)
        y0.grad_fn.register_prehook(lambda go: log.append(("pre", _L(go))))
        y0.sum().backward()
        return x.grad

    return scenario


@pytest.mark.parametrize("flag", [True, False])
def test_set_materialize_grads(torch, flag):
    assert_same(_materialize(flag), torch)


def _list_output(lib, log):
    F = lib.autograd.Function

    class Lst(F):
        @staticmethod
        def forward(ctx, x):
            return [x * 2, x * 3]

        @staticmethod
        def backward(ctx, g):
            return g

    out = Lst.apply(lib.ones(2, requires_grad=True))
    return type(out).__name__, out[0].grad_fn


def test_list_output_is_not_wrapped(torch):
    assert_same(_list_output, torch)


# ---------------------------------------------------------------------------------- hooks, saved
def _hooks(lib, log):
    Scale, _, _ = _fns(lib)
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = Scale.apply(a, 2.0)
    n = y.grad_fn
    n.register_prehook(lambda go: log.append(("pre", _L(go))))
    n.register_prehook(lambda go: (go[0] * 10,))
    n.register_hook(lambda gi, go: log.append(("post", _L(gi), _L(go))))
    y.register_hook(lambda g: log.append(("tensor", g.tolist())))
    n.metadata["k"] = 1
    log.append(n.metadata)
    (y * 1).sum().backward()
    return a.grad


def test_hooks_on_custom_nodes(torch):
    assert_same(_hooks, torch)


def _freed(kind):
    def scenario(lib, log):
        F = lib.autograd.Function

        class G(F):
            @staticmethod
            def forward(ctx, x):
                if kind == "saves":
                    ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                if kind != "reads_nothing":
                    log.append(len(ctx.saved_tensors))
                return g * 2

        a = lib.ones(2, requires_grad=True)
        y = G.apply(a)
        y.sum().backward(retain_graph=kind == "retained")
        y.sum().backward()
        return a.grad

    return scenario


@pytest.mark.parametrize("kind", ["saves", "saves_nothing", "reads_nothing", "retained"])
def test_second_backward_freed_error(torch, kind):
    assert_same(_freed(kind), torch)


def _save_errors(lib, log):
    F = lib.autograd.Function

    class S(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            log.append(ctx.saved_tensors)
            return g

    class Bad(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    a = lib.ones(2, requires_grad=True)
    S.apply(a).sum().backward()
    Bad.apply(lib.ones(2))  # not recorded: nothing is saved, no error
    return Bad.apply(a)


def test_save_for_backward_none_and_type_error(torch):
    assert_same(_save_errors, torch)


def _version_error(which):
    def scenario(lib, log):
        F = lib.autograd.Function

        class S(F):
            @staticmethod
            def forward(ctx, x):
                r = x * 2
                ctx.save_for_backward(r if which == "output" else x)
                return r

            @staticmethod
            def backward(ctx, g):
                (t,) = ctx.saved_tensors
                log.append((t.requires_grad, t.grad_fn is not None))
                return g * t

        a = lib.ones(2, requires_grad=True)
        b = a * 1
        y = S.apply(b)
        (y if which == "output" else b).mul_(2)
        y.sum().backward()

    return scenario


@pytest.mark.parametrize("which", ["input", "output"])
def test_saved_tensor_modified_inplace_raises(torch, which):
    assert_same(_version_error(which), torch)


def _saved_tensor_hooks(lib, log):
    try:
        hooks = lib.autograd.graph.saved_tensors_hooks
    except (AttributeError, ImportError):
        pytest.skip("saved_tensors_hooks not available yet")
    _, Cube, _ = _fns(lib)
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with hooks(lambda t: (log.append(("pack", t.tolist())), t)[1],
               lambda t: (log.append(("unpack", t.tolist())), t)[1]):
        y = Cube.apply(a * 1)
        log.append("fwd")
    y.sum().backward()
    return a.grad


def test_saved_tensor_hooks_apply_to_save_for_backward(torch):
    assert_same(_saved_tensor_hooks, torch)


# ---------------------------------------------------------------------------------- higher order
def _third_order(lib, log):
    _, Cube, _ = _fns(lib)
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (g1,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = lib.autograd.grad(g2.sum(), x)
    return g1, g2, g3, g1.grad_fn.name()


def test_double_and_triple_backward_through_function(torch):
    assert_same(_third_order, torch)


def _once(lib, log):
    F = lib.autograd.Function
    once = lib.autograd.function.once_differentiable

    class Sq(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            log.append(lib.is_grad_enabled())
            return 2 * x * g

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    (g,) = lib.autograd.grad(Sq.apply(a), a, lib.ones(2, requires_grad=True), create_graph=True)
    log += [g, g.grad_fn.name(), type(g.grad_fn).__name__, len(g.grad_fn.next_functions)]
    (plain,) = lib.autograd.grad(Sq.apply(a).sum(), a)
    log.append(plain)
    g.sum().backward()


def test_once_differentiable(torch):
    assert_same(_once, torch)


def _backward_hook_function(lib, log):
    F = lib.autograd.Function

    class BackwardHookFunction(F):  # PyTorch's module backward-hook identity, verbatim
        @staticmethod
        def forward(ctx, *args):
            ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
            return args

        @staticmethod
        def backward(ctx, *args):
            log.append(("backward", _L(args)))
            return args

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0])
    wx, wy = BackwardHookFunction.apply(x, y)
    log += [wx.grad_fn.name(), wy.grad_fn, wx._is_view(), wy._is_view(), wy.requires_grad]
    wx.grad_fn.register_hook(lambda gi, go: log.append(("post", _L(gi), _L(go))))
    for t in (wx, wy):
        try:
            t.mul_(2)
        except RuntimeError as e:
            log.append(str(e))
    (wx * wy).sum().backward()
    return x.grad


def test_backward_hook_function_pattern(torch):
    assert_same(_backward_hook_function, torch)


# ---------------------------------------------------------------------------------- forward AD
def _forward_ad(kind):
    def scenario(lib, log):
        fwAD = lib.autograd.forward_ad
        F = lib.autograd.Function

        class Sq(F):
            @staticmethod
            def forward(ctx, x, k):
                ctx.save_for_forward(x)
                ctx.save_for_backward(x)
                # forward AD is off inside forward: ops there produce no tangent
                log.append(("fwd tangent", fwAD.unpack_dual(x * 1).tangent))
                if kind == "no_materialize":
                    ctx.set_materialize_grads(False)
                return x * x * k

            @staticmethod
            def jvp(ctx, tx, tk):
                (x,) = ctx.saved_tensors
                log.append(("jvp", tx, tk))
                if kind == "bad_count":
                    return tx, tx
                return 2 * x * tx * 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g * 3, None

        class Mul(F):
            @staticmethod
            def forward(ctx, x, y):
                if kind == "no_materialize":
                    ctx.set_materialize_grads(False)
                return x * y

            @staticmethod
            def jvp(ctx, tx, ty):
                log.append(("mul jvp", tx, ty))
                return ty if tx is None else tx + ty

            @staticmethod
            def backward(ctx, g):
                return g, g

        class NoJvp(F):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        with fwAD.dual_level():
            x = fwAD.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 0.5]))
            if kind == "missing_jvp":
                return NoJvp.apply(x)
            y = Sq.apply(x, 3.0)
            z = Mul.apply(lib.ones(2), x)
            plain = NoJvp.apply(lib.ones(2))  # no dual input: jvp is not needed
            return (fwAD.unpack_dual(y), fwAD.unpack_dual(z).tangent,
                    fwAD.unpack_dual(plain).tangent)

    return scenario


@pytest.mark.parametrize("kind", ["materialize", "no_materialize", "bad_count", "missing_jvp"])
def test_forward_ad_through_jvp(torch, kind):
    assert_same(_forward_ad(kind), torch)
