"""Workloads, each written once against a library parameter ``lib`` (torch or hookgrad).

Every workload is a factory ``make(lib, size)`` returning ``(step, first_value)``: ``step()`` runs
one timed unit and ``first_value`` is a float computed from the same weights and data, which the
harness compares between libraries before timing (same weights, same data).

A compiled workload (name ending in ``_compile``) returns ``(step, first_value, first_calls_s)``:
its first value is the loss of its first compiled step, the first two steps timed cold
(`_first_call`); built
inside `uncompiled()` the same factory gives PyTorch eager's column of the row.
"""

from __future__ import annotations

import contextlib
import time
import warnings

import numpy as np

CHAIN_OPS = 200  # elementwise ops per chain (100 links of mul + tanh)


def _t(lib, arr, requires_grad=False):
    t = lib.tensor(np.asarray(arr, dtype=np.float32))
    return t.requires_grad_(True) if requires_grad else t


def chain(lib, hooks=False):
    x0 = np.random.default_rng(0).normal(size=(16, 16)).astype(np.float32)
    x = _t(lib, x0, True)

    def step():
        y = x
        for _ in range(CHAIN_OPS // 2):
            y = lib.tanh(y * 1.01)
            if hooks:
                y.register_hook(_noop)
        y.sum().backward()
        x.grad = None

    y = x
    for _ in range(CHAIN_OPS // 2):
        y = lib.tanh(y * 1.01)
    return step, float(y.sum().item())


def _noop(g):
    return None


def _mlp_params(rng, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, size=(fan_out, fan_in)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, size=(fan_out,)).astype(np.float32))
    return params


def _load_linear(lin, w, b, lib):
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(w))
        lin.bias.copy_(lib.tensor(b))


def _mlp_setup(lib, batch):
    rng = np.random.default_rng(1)
    params = _mlp_params(rng, [784, 256, 256, 10])
    model = lib.nn.Sequential(
        lib.nn.Linear(784, 256), lib.nn.ReLU(), lib.nn.Linear(256, 256), lib.nn.ReLU(),
        lib.nn.Linear(256, 10),
    )
    for i, lin in enumerate([model[0], model[2], model[4]]):
        _load_linear(lin, params[2 * i], params[2 * i + 1], lib)
    x = _t(lib, rng.normal(size=(batch, 784)))
    y = lib.tensor(rng.integers(0, 10, size=batch).astype(np.int64))
    return model, x, y


def _train_step(lib, model, x, y, forward=None):
    """An SGD step with cross-entropy; `forward` (default `model`) runs the model in the step."""
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.CrossEntropyLoss()
    first = float(loss_fn(model(x), y).item())
    run = model if forward is None else forward

    def step():
        opt.zero_grad()
        loss_fn(run(x), y).backward()
        opt.step()

    return step, first


def mlp(lib, batch):
    return _train_step(lib, *_mlp_setup(lib, batch))


def mlp_mse(lib, batch=1):
    """The MLP step with a mean-squared-error loss against a fixed target (per-op overhead)."""
    model, x, _ = _mlp_setup(lib, batch)
    target = _t(lib, np.random.default_rng(2).normal(size=(batch, 10)))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.MSELoss()
    first = float(loss_fn(model(x), target).item())

    def step():
        opt.zero_grad()
        loss_fn(model(x), target).backward()
        opt.step()

    return step, first


def hooked_mlp(lib, batch=64):
    """The MLP step with forward pre/post and full backward hooks on every layer."""
    model, x, y = _mlp_setup(lib, batch)
    for layer in model:
        layer.register_forward_pre_hook(lambda m, args: None)
        layer.register_forward_hook(lambda m, args, out: None)
        layer.register_full_backward_hook(lambda m, gi, go: None)
    step, first = _quiet(*_train_step(lib, model, x, y))
    return step, first


def _quiet(step, first):
    """Silence the first layer's full backward hook warning (its input needs no grad).

    Both libraries warn "Full backward hook is firing when gradients are computed with respect
    to module outputs since no inputs require gradients" on every step; the warning is expected
    here and printing it would only slow both down alike.
    """

    def quiet_step():
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            return step()

    return quiet_step, first


def _cnn_setup(lib, batch):
    rng = np.random.default_rng(2)
    conv = lib.nn.Conv2d(1, 8, 3)
    lin = lib.nn.Linear(8 * 13 * 13, 10)
    wc = rng.uniform(-0.3, 0.3, size=(8, 1, 3, 3)).astype(np.float32)
    bc = rng.uniform(-0.3, 0.3, size=(8,)).astype(np.float32)
    wl = rng.uniform(-0.03, 0.03, size=(10, 8 * 13 * 13)).astype(np.float32)
    bl = rng.uniform(-0.03, 0.03, size=(10,)).astype(np.float32)
    with lib.no_grad():
        conv.weight.copy_(lib.tensor(wc))
        conv.bias.copy_(lib.tensor(bc))
    _load_linear(lin, wl, bl, lib)
    model = lib.nn.Sequential(conv, lib.nn.ReLU(), lib.nn.MaxPool2d(2), lib.nn.Flatten(), lin)
    x = _t(lib, rng.normal(size=(batch, 1, 28, 28)))
    y = lib.tensor(rng.integers(0, 10, size=batch).astype(np.int64))
    return model, x, y


def cnn(lib, batch=64):
    return _train_step(lib, *_cnn_setup(lib, batch))


def _hvp_setup(lib):
    rng = np.random.default_rng(3)
    w1 = _t(lib, rng.normal(size=(10, 32)) * 0.3, True)
    w2 = _t(lib, rng.normal(size=(32, 1)) * 0.3, True)
    x = _t(lib, rng.normal(size=(16, 10)))
    v1 = _t(lib, rng.normal(size=(10, 32)))
    v2 = _t(lib, rng.normal(size=(32, 1)))
    return w1, w2, x, v1, v2


def hvp(lib):
    w1, w2, x, v1, v2 = _hvp_setup(lib)

    def loss():
        return (lib.tanh(x @ w1) @ w2).pow(2).mean()

    def step():
        g1, g2 = lib.autograd.grad(loss(), (w1, w2), create_graph=True)
        dot = (g1 * v1).sum() + (g2 * v2).sum()
        lib.autograd.grad(dot, (w1, w2))

    return step, float(loss().item())


def _lstm_setup(lib, batch):
    rng = np.random.default_rng(4)
    model = lib.nn.LSTM(32, 64, batch_first=True)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.1, 0.1, size=tuple(p.shape)).astype(np.float32)))
    x = _t(lib, rng.normal(size=(batch, 20, 32)))
    return model, x, lib.optim.SGD(model.parameters(), lr=0.01)


def lstm(lib, batch=32):
    model, x, opt = _lstm_setup(lib, batch)
    first = float(model(x)[0].pow(2).mean().item())

    def step():
        opt.zero_grad()
        model(x)[0].pow(2).mean().backward()
        opt.step()

    return step, first


COMPILED_SUFFIX = "_compile"
_UNCOMPILED = [False]


@contextlib.contextmanager
def uncompiled():
    """Build compiled workloads without compiling: PyTorch eager's column of a compiled row."""
    _UNCOMPILED[0] = True
    try:
        yield
    finally:
        _UNCOMPILED[0] = False


def _compiled(lib, fn):
    """``lib.compile(fn)`` with each library's default backend (hookgrad's ``"inductor"``,
    PyTorch's inductor); `fn` itself inside `uncompiled()`."""
    return fn if _UNCOMPILED[0] else lib.compile(fn)


def _first_call(step, loss_of):
    """Run a compiled workload's first two steps: ``(step, first loss, their seconds)``.

    The first call traces and compiles; hookgrad's artifact runs (and validates its generated
    backward) from the second call, so both calls count as the compile cost, for both
    libraries alike (wall clock: PyTorch's inductor compiles in child processes). The first
    call's loss is compared with the other libraries' first loss, so the harness checks the
    compiled code, not an eager evaluation made beside it.
    """
    t0 = time.perf_counter()
    first = float(loss_of(step()).item())
    step()
    return step, first, time.perf_counter() - t0


def chain_compile(lib, hooks=False):
    x0 = np.random.default_rng(0).normal(size=(16, 16)).astype(np.float32)
    x = _t(lib, x0, True)

    def f(t):
        y = t
        for _ in range(CHAIN_OPS // 2):
            y = lib.tanh(y * 1.01)
            if hooks:
                y.register_hook(_noop)
        return y.sum()
    opt = _compiled(lib, f)

    def step():
        out = opt(x)
        out.backward()
        x.grad = None
        return out

    return _first_call(step, lambda out: out.detach())


def _compiled_train_step(lib, model, x, y, quiet=False):
    """`_train_step`'s SGD step with the model under ``lib.compile`` (loss and optimizer eager,
    as ``model = torch.compile(model)`` in a training script)."""
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = lib.nn.CrossEntropyLoss()
    run = _compiled(lib, model)

    def step():
        opt.zero_grad()
        loss = loss_fn(run(x), y)
        loss.backward()
        opt.step()
        return loss

    if quiet:
        step = _quiet(step, None)[0]
    return _first_call(step, lambda loss: loss.detach())


def _whole_train_step(lib, model, opt, loss_of):
    """`models.gpt_step` (loss, ``backward()``, ``clip_grad_norm_``, optimizer step,
    ``zero_grad``) compiled whole, as ``torch.compile(train_step)``: hookgrad compiles the
    statements before ``backward()`` as one graph and runs the rest eagerly (NOTE [Resume after
    a backward break]); PyTorch's dynamo compiles the forward and the code after the break
    (``clip_grad_norm_``, the optimizer step) as graphs of their own."""
    from bench import models

    run = _compiled(lib, models.gpt_step)
    return lambda x, y: run(lib, model, opt, loss_of, x, y)


def mlp_step_compile(lib, batch):
    """mlp64's step (with ``clip_grad_norm_``) compiled whole."""
    model, x, y = _mlp_setup(lib, batch)
    loss_fn = lib.nn.CrossEntropyLoss()
    run = _whole_train_step(lib, model, lib.optim.SGD(model.parameters(), lr=0.01),
                            lambda x, y: loss_fn(model(x), y))
    return _first_call(lambda: run(x, y), lambda loss: loss.detach())


def mlp_compile(lib, batch, hooks=False):
    model, x, y = _mlp_setup(lib, batch)
    if hooks:
        for layer in model:
            layer.register_forward_pre_hook(lambda m, args: None)
            layer.register_forward_hook(lambda m, args, out: None)
            layer.register_full_backward_hook(lambda m, gi, go: None)
    return _compiled_train_step(lib, model, x, y, quiet=hooks)


def cnn_compile(lib, batch=64):
    """cnn with the model under ``lib.compile`` (loss and optimizer stay eager)."""
    return _compiled_train_step(lib, *_cnn_setup(lib, batch))


def hvp_compile(lib):
    """hvp with the loss under ``lib.compile`` (the double backward goes through it)."""
    w1, w2, x, v1, v2 = _hvp_setup(lib)

    def loss(a, b):
        return (lib.tanh(x @ a) @ b).pow(2).mean()
    closs = _compiled(lib, loss)

    def step():
        out = closs(w1, w2)
        g1, g2 = lib.autograd.grad(out, (w1, w2), create_graph=True)
        dot = (g1 * v1).sum() + (g2 * v2).sum()
        lib.autograd.grad(dot, (w1, w2))
        return out

    return _first_call(step, lambda out: out.detach())


def lstm_compile(lib, batch=32):
    """lstm with the model under ``lib.compile`` (PyTorch's dynamo runs ``nn.LSTM`` eagerly:
    ``allow_rnn`` is off by default)."""
    model, x, opt = _lstm_setup(lib, batch)
    run = _compiled(lib, model)

    def step():
        opt.zero_grad()
        loss = run(x)[0].pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    return _first_call(step, lambda loss: loss.detach())


def gpt_compile(lib):
    """The nanoGPT step with the model under ``lib.compile`` (as nanoGPT's ``compile=True``)."""
    from bench import models

    model, x, y, opt = models.gpt_setup(lib)
    run = _compiled(lib, model)
    return _first_call(lambda: models.gpt_step(lib, model, opt, run, x, y),
                       lambda loss: loss.detach())


def gpt_step_compile(lib):
    """The nanoGPT step (loss, backward, clip, AdamW, zero_grad) compiled whole."""
    from bench import models

    model, x, y, opt = models.gpt_setup(lib)
    run = _whole_train_step(lib, model, opt, model)
    return _first_call(lambda: run(x, y), lambda loss: loss.detach())


def peak_memory_mb(lib) -> float:
    """Peak traced Python-level allocation of one MLP-64 training step, in MiB."""
    import tracemalloc

    step, _ = mlp(lib, 64)
    step()
    tracemalloc.start()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


# name -> (factory(lib) -> (step, first_value), unit divisor, unit label, description)
TABLE = {
    "chain": (lambda lib: chain(lib), CHAIN_OPS, "us/op",
              "200 elementwise ops (mul, tanh) on 16x16, forward+backward"),
    "chain_hooks": (lambda lib: chain(lib, hooks=True), CHAIN_OPS // 2, "us/hook",
                    "same chain + no-op register_hook per intermediate (extra cost per hook)"),
    "mlp64": (lambda lib: mlp(lib, 64), 1, "ms/step", "MLP 784-256-256-10, CE, SGD, batch 64"),
    "mlp1024": (lambda lib: mlp(lib, 1024), 1, "ms/step", "same MLP, batch 1024"),
    "mlp1_mse": (lambda lib: mlp_mse(lib, 1), 1, "ms/step", "same MLP, batch 1, MSE loss"),
    "cnn": (lambda lib: cnn(lib), 1, "ms/step",
            "conv3x3(1->8)+ReLU+maxpool2+Linear, 1x28x28, batch 64"),
    "hvp": (lambda lib: hvp(lib), 1, "ms/step", "Hessian-vector product, small MLP loss"),
    "lstm": (lambda lib: lstm(lib), 1, "ms/step", "LSTM(32->64), seq 20, batch 32, SGD step"),
    "hooked_mlp": (lambda lib: hooked_mlp(lib), 1, "ms/step",
                   "MLP batch 64 with fwd pre/post + full backward hooks on every layer"),
    "chain_compile": (lambda lib: chain_compile(lib), CHAIN_OPS, "us/op",
                      "chain under lib.compile"),
    "chain_hooks_compile": (lambda lib: chain_compile(lib, hooks=True), CHAIN_OPS // 2,
                            "us/hook", "chain_hooks under lib.compile"),
    "cnn_compile": (lambda lib: cnn_compile(lib), 1, "ms/step",
                    "cnn with the model under lib.compile"),
    "hvp_compile": (lambda lib: hvp_compile(lib), 1, "ms/step",
                    "hvp with the loss under lib.compile"),
    "mlp64_compile": (lambda lib: mlp_compile(lib, 64), 1, "ms/step",
                      "mlp64 with the model under lib.compile"),
    "mlp64_step_compile": (lambda lib: mlp_step_compile(lib, 64), 1, "ms/step",
                           "mlp64 step (+clip_grad_norm_) compiled whole: lib.compile(step)"),
    "hooked_mlp_compile": (lambda lib: mlp_compile(lib, 64, hooks=True), 1, "ms/step",
                           "hooked_mlp with the model under lib.compile"),
    "lstm_compile": (lambda lib: lstm_compile(lib), 1, "ms/step",
                     "lstm with the model under lib.compile"),
    "gpt_compile": (lambda lib: gpt_compile(lib), 1, "ms/step",
                    "gpt (nanoGPT step) with the model under lib.compile"),
    "gpt_step_compile": (lambda lib: gpt_step_compile(lib), 1, "ms/step",
                         "gpt (nanoGPT step) compiled whole: lib.compile(step)"),
}

# the real-model workloads (nanoGPT, LSTM language model, MNIST CNN) live in bench.models
from bench import models as _models  # noqa: E402  (after TABLE: models does not import this)

TABLE.update(_models.TABLE)

# the torch.func workloads (per-sample gradients, jacrev) live in bench.func_workloads
from bench import func_workloads as _func  # noqa: E402  (after TABLE, as bench.models)

TABLE.update(_func.TABLE)
