"""nn.Module, optimizer, scheduler, data, autograd.Function and distribution misuse in the
bad-input corpus (see `_bad_inputs` for the contract); tables crossed with bad arguments."""

from __future__ import annotations

import math

from tests.fuzz._bad_inputs import _add
from tests.fuzz._bad_ops import _x


def _lin(lib):
    lib.manual_seed(0)
    return lib.nn.Linear(2, 2)


# ---------------------------------------------------------------------------- register_* names
_NAMES = {"empty": "", "dot": "a.b", "int": 3, "none": None, "existing_attr": "training",
          "existing_param": "weight", "method": "forward", "bytes": b"a"}
_VALUES = {
    "parameter": lambda lib: lib.nn.Parameter(_x(lib, 2)),
    "tensor": lambda lib: _x(lib, 2),
    "int": lambda lib: 3,
    "module": lambda lib: lib.nn.ReLU(),
    "none": lambda lib: None,
}
_REGISTER = {
    "register_buffer": lambda m, n, v: m.register_buffer(n, v),
    "register_parameter": lambda m, n, v: m.register_parameter(n, v),
    "register_module": lambda m, n, v: m.register_module(n, v),
}
_GOOD_VALUE = {"register_buffer": "tensor", "register_parameter": "parameter",
               "register_module": "module"}
for _rk, _rf in _REGISTER.items():
    for _nk, _nv in _NAMES.items():
        _add(f"module[{_rk},name_{_nk}]", lambda lib, rf=_rf, nv=_nv, vf=_VALUES[_GOOD_VALUE[_rk]]:
             rf(_lin(lib), nv, vf(lib)))
    for _vk, _vf in _VALUES.items():
        _add(f"module[{_rk},value_{_vk}]", lambda lib, rf=_rf, vf=_vf: rf(_lin(lib), "w", vf(lib)))
_add("module[register_buffer,persistent_str]",
     lambda lib: _lin(lib).register_buffer("b", _x(lib, 2), persistent="no"))
_add("module[setattr_param_tensor]", lambda lib: setattr(_lin(lib), "weight", _x(lib, 2, 2)))
_add("module[setattr_param_int]", lambda lib: setattr(_lin(lib), "weight", 3))
_add("module[setattr_module_tensor]",
     lambda lib: setattr(lib.nn.Sequential(lib.nn.ReLU()), "0", _x(lib, 2)))
_add("module[getattr_missing]", lambda lib: _lin(lib).nope)
_add("module[delattr_missing]", lambda lib: delattr(_lin(lib), "nope"))
_add("module[get_parameter_missing]", lambda lib: _lin(lib).get_parameter("nope"))
_add("module[get_submodule_missing]", lambda lib: _lin(lib).get_submodule("a.b"))
_add("module[get_buffer_missing]", lambda lib: _lin(lib).get_buffer("weight"))
_add("module[apply_not_callable]", lambda lib: _lin(lib).apply(3))
_add("module[train_str]", lambda lib: _lin(lib).train("yes"))
_add("module[requires_grad_str]", lambda lib: _lin(lib).requires_grad_("a"))
_add("module[forward_not_impl]", lambda lib: lib.nn.Module()(_x(lib, 2)))
_add("module[call_no_args]", lambda lib: _lin(lib)())
_add("module[call_extra_args]", lambda lib: _lin(lib)(_x(lib, 2), _x(lib, 2)))
_add("module[sequential_index]", lambda lib: lib.nn.Sequential(lib.nn.ReLU())[3])
_add("module[sequential_str_index]", lambda lib: lib.nn.Sequential(lib.nn.ReLU())["a"])
_add("module[modulelist_not_module]", lambda lib: lib.nn.ModuleList([3]))
_add("module[moduledict_not_module]", lambda lib: lib.nn.ModuleDict({"a": 3}))
_add("module[moduledict_missing]", lambda lib: lib.nn.ModuleDict()["a"])
_add("module[parameterlist_index]", lambda lib: lib.nn.ParameterList()[0])
_add("module[add_module_dup_attr]", lambda lib: _lin(lib).add_module("training", lib.nn.ReLU()))

# ---------------------------------------------------------------------------- hooks
_HOOK_SITES = ("register_forward_hook", "register_forward_pre_hook",
               "register_full_backward_hook", "register_full_backward_pre_hook",
               "register_state_dict_pre_hook", "register_load_state_dict_post_hook")
_BAD_HOOKS = {"int": 3, "none": None, "str": "f"}
for _hs in _HOOK_SITES:
    for _bk, _bv in _BAD_HOOKS.items():
        def _run(lib, hs=_hs, bv=_bv):
            m = _lin(lib)
            getattr(m, hs)(bv)
            x = _x(lib, 3, 2, rg=True)
            m(x).sum().backward()
            m.load_state_dict(m.state_dict())
        _add(f"hook[{_hs},{_bk}]", _run)
_add("hook[forward_hook_raises]", lambda lib: (lambda m: (m.register_forward_hook(
    lambda *a: 1 / 0), m(_x(lib, 2))))(_lin(lib)))
_add("hook[forward_pre_hook_bad_return]", lambda lib: (lambda m: (m.register_forward_pre_hook(
    lambda m_, a: 3), m(_x(lib, 2))))(_lin(lib)))
_add("hook[backward_hook_wrong_len]", lambda lib: (lambda m: (m.register_full_backward_hook(
    lambda m_, gi, go: (gi[0], gi[0])), m(_x(lib, 2, rg=True)).sum().backward()))(_lin(lib)))
_add("hook[backward_hook_wrong_shape]", lambda lib: (lambda m: (m.register_full_backward_hook(
    lambda m_, gi, go: (_x(lib, 3),)), m(_x(lib, 2, rg=True)).sum().backward()))(_lin(lib)))
_add("hook[tensor_hook_wrong_shape]", lambda lib: (lambda t: (t.register_hook(
    lambda g: _x(lib, 3)), (t * 2).sum().backward()))(_x(lib, 2, rg=True)))
_add("hook[tensor_hook_not_tensor]", lambda lib: (lambda t: (t.register_hook(
    lambda g: 3), (t * 2).sum().backward()))(_x(lib, 2, rg=True)))
_add("hook[tensor_hook_int]", lambda lib: _x(lib, 2, rg=True).register_hook(3))

# ---------------------------------------------------------------------------- load_state_dict
_SD_FAULTS = {
    "missing": lambda lib, sd: {"weight": sd["weight"]},
    "unexpected": lambda lib, sd: {**sd, "extra": _x(lib, 2)},
    "shape": lambda lib, sd: {**sd, "weight": _x(lib, 3, 2)},
    "dtype": lambda lib, sd: {**sd, "weight": _x(lib, 2, 2, dtype="float64")},
    "int_dtype": lambda lib, sd: {**sd, "weight": _x(lib, 2, 2, dtype="int64")},
    "not_tensor": lambda lib, sd: {**sd, "weight": [[1.0, 2.0], [3.0, 4.0]]},
    "none_value": lambda lib, sd: {**sd, "bias": None},
    "scalar": lambda lib, sd: {**sd, "bias": 3.0},
    "list": lambda lib, sd: list(sd.items()),
    "none": lambda lib, sd: None,
    "int_keys": lambda lib, sd: {0: sd["weight"], 1: sd["bias"]},
    "0d": lambda lib, sd: {**sd, "bias": lib.tensor(1.0)},
    "requires_grad": lambda lib, sd: {**sd, "weight": _x(lib, 2, 2, rg=True)},
}
_SD_MODES = {"strict": {}, "nonstrict": {"strict": False}, "assign": {"assign": True},
             "assign_nonstrict": {"assign": True, "strict": False}}
for _fk, _ff in _SD_FAULTS.items():
    for _mk, _mv in _SD_MODES.items():
        def _load(lib, ff=_ff, mv=_mv):
            m = _lin(lib)
            return m.load_state_dict(ff(lib, m.state_dict()), **mv)
        _add(f"state_dict[{_fk},{_mk}]", _load)
_add("state_dict[strict_str]", lambda lib: _lin(lib).load_state_dict(_lin(lib).state_dict(),
                                                                      strict="yes"))
_add("state_dict[bn_shape]", lambda lib: lib.nn.BatchNorm1d(2).load_state_dict(
    {**lib.nn.BatchNorm1d(2).state_dict(), "running_mean": _x(lib, 3)}))
_add("state_dict[prefix_int]", lambda lib: _lin(lib).state_dict(prefix=3))
_add("state_dict[destination_list]", lambda lib: _lin(lib).state_dict([]))

# ---------------------------------------------------------------------------- to()/type()
_TO = {
    "str_dtype": lambda lib, m: m.to("float32"),
    "int": lambda lib, m: m.to(3.5),
    "int_dtype_module": lambda lib, m: m.to(lib.int64),
    "bool_dtype_module": lambda lib, m: m.to(lib.bool),
    "two_dtypes": lambda lib, m: m.to(lib.float64, lib.float32),
    "unknown_kw": lambda lib, m: m.to(dtypee=lib.float64),
    "memory_format": lambda lib, m: m.to(memory_format=3),
    "type_str": lambda lib, m: m.type("torch.NopeTensor"),
    "type_int": lambda lib, m: m.type(3),
    "half_then_call": lambda lib, m: m.half()(_x(lib, 2)),
    "double_then_call": lambda lib, m: m.double()(_x(lib, 2)),
}
for _tk, _tf in _TO.items():
    _add(f"module_to[linear,{_tk}]", lambda lib, tf=_tf: tf(lib, _lin(lib)))
    _add(f"module_to[tensor,{_tk}]", lambda lib, tf=_tf: tf(lib, _x(lib, 2, 2)))

# ---------------------------------------------------------------------------- optimizers
_OPTIMS = {"SGD": {"lr": 0.1}, "Adam": {}, "AdamW": {}, "RMSprop": {}, "Adagrad": {},
           "Adadelta": {}, "Adamax": {}, "NAdam": {}, "RAdam": {}}
_OPT_FAULTS = {
    "lr_neg": {"lr": -1.0}, "lr_str": {"lr": "a"}, "lr_none": {"lr": None},
    "weight_decay_neg": {"weight_decay": -1.0}, "unknown_kw": {"nope": 1},
    "params_tensor": "@tensor", "params_empty": "@empty", "params_int": "@int",
    "params_dup": "@dup", "params_nonleaf": "@nonleaf", "params_group_no_params": "@group",
    "params_set": "@set", "params_dict_of_tensors": "@dict",
}


def _params(lib, kind):
    p = lib.nn.Parameter(_x(lib, 2))
    return {"@tensor": p, "@empty": [], "@int": [3], "@dup": [p, p],
            "@nonleaf": [_x(lib, 2, rg=True) * 2], "@group": [{"lr": 0.1}], "@set": {p},
            "@dict": {"a": p}}.get(kind, [p])


for _ok, _okw in _OPTIMS.items():
    for _fk, _fv in _OPT_FAULTS.items():
        def _make(lib, ok=_ok, okw=_okw, fv=_fv):
            kw = dict(okw)
            params = _params(lib, fv if isinstance(fv, str) else "")
            if isinstance(fv, dict):
                kw.update(fv)
            return getattr(lib.optim, ok)(params, **kw)
        _add(f"optim[{_ok},{_fk}]", _make)
_add("optim[Adam,betas_neg]", lambda lib: lib.optim.Adam(_params(lib, ""), betas=(-0.1, 0.9)))
_add("optim[Adam,betas_one]", lambda lib: lib.optim.Adam(_params(lib, ""), betas=(0.9,)))
_add("optim[Adam,eps_neg]", lambda lib: lib.optim.Adam(_params(lib, ""), eps=-1.0))
_add("optim[SGD,momentum_neg]", lambda lib: lib.optim.SGD(_params(lib, ""), lr=0.1, momentum=-1))
_add("optim[SGD,nesterov_no_momentum]",
     lambda lib: lib.optim.SGD(_params(lib, ""), lr=0.1, nesterov=True))
_add("optim[RMSprop,alpha_neg]", lambda lib: lib.optim.RMSprop(_params(lib, ""), alpha=-1.0))
_add("optim[add_param_group_dup]", lambda lib: (lambda ps: lib.optim.SGD(ps, lr=0.1)
                                                 .add_param_group({"params": ps}))(_params(lib, "")))
_add("optim[add_param_group_not_dict]",
     lambda lib: lib.optim.SGD(_params(lib, ""), lr=0.1).add_param_group([_x(lib, 2)]))
_add("optim[load_state_dict_groups]", lambda lib: lib.optim.SGD(_params(lib, ""), lr=0.1)
     .load_state_dict({"state": {}, "param_groups": []}))
_add("optim[load_state_dict_sizes]", lambda lib: lib.optim.SGD(_params(lib, ""), lr=0.1)
     .load_state_dict({"state": {}, "param_groups": [{"params": [0, 1], "lr": 0.1}]}))
_add("optim[load_state_dict_missing_key]", lambda lib: lib.optim.SGD(_params(lib, ""), lr=0.1)
     .load_state_dict({"state": {}}))
_add("optim[step_closure_not_callable]",
     lambda lib: lib.optim.SGD(_params(lib, ""), lr=0.1).step(3))
_add("optim[zero_grad_str]", lambda lib: lib.optim.SGD(_params(lib, ""), lr=0.1).zero_grad("a"))

# ---------------------------------------------------------------------------- lr schedulers
_SCHEDULERS = {
    "StepLR": {"step_size": 1}, "MultiStepLR": {"milestones": [1]},
    "ExponentialLR": {"gamma": 0.5}, "CosineAnnealingLR": {"T_max": 2},
    "LambdaLR": {"lr_lambda": lambda e: 1.0}, "OneCycleLR": {"max_lr": 0.1, "total_steps": 2},
    "ReduceLROnPlateau": {}, "LinearLR": {}, "ConstantLR": {}, "CyclicLR": {"base_lr": 0.01,
                                                                          "max_lr": 0.1},
}
_SCHED_FAULTS = {
    "not_optimizer": "@notopt", "unknown_kw": {"nope": 1}, "last_epoch_no_initial": {
        "last_epoch": 3},
}
for _sk, _skw in _SCHEDULERS.items():
    for _fk, _fv in _SCHED_FAULTS.items():
        def _sched(lib, sk=_sk, skw=_skw, fv=_fv):
            opt = lib.optim.SGD(_params(lib, ""), lr=0.1, momentum=0.9)
            kw = dict(skw)
            if isinstance(fv, dict):
                kw.update(fv)
            return getattr(lib.optim.lr_scheduler, sk)(_x(lib, 2) if fv == "@notopt" else opt,
                                                         **kw)
        _add(f"sched[{_sk},{_fk}]", _sched)
_SCHED_VALUES = {
    "StepLR": {"step_size": "a"}, "MultiStepLR": {"milestones": 3},
    "LambdaLR": {"lr_lambda": [lambda e: 1.0] * 3}, "OneCycleLR": {"max_lr": 0.1},
    "OneCycleLR_neg": {"max_lr": 0.1, "total_steps": -1},
    "ReduceLROnPlateau": {"mode": "nope"}, "ReduceLROnPlateau_factor": {"factor": 2.0},
    "LinearLR": {"start_factor": 2.0}, "ConstantLR": {"factor": 2.0},
    "CosineAnnealingWarmRestarts": {"T_0": 0}, "CosineAnnealingWarmRestarts_mult": {
        "T_0": 2, "T_mult": 0.5},
    "PolynomialLR": {"total_iters": "a"}, "CyclicLR": {"base_lr": 0.01, "max_lr": 0.1,
                                                       "mode": "nope"},
    "SequentialLR": {"schedulers": [], "milestones": []},
}
for _sk, _skw in _SCHED_VALUES.items():
    def _sched_v(lib, sk=_sk.split("_")[0] if _sk.split("_")[0] in (
            "OneCycleLR", "ReduceLROnPlateau", "CosineAnnealingWarmRestarts") else _sk, skw=_skw):
        opt = lib.optim.SGD(_params(lib, ""), lr=0.1, momentum=0.9)
        s = getattr(lib.optim.lr_scheduler, sk)(opt, **skw)
        s.step(1.0) if sk == "ReduceLROnPlateau" else [s.step() for _ in range(3)]
    _add(f"sched_value[{_sk}]", _sched_v)
_add("sched[OneCycleLR,past_end]", lambda lib: (lambda s: [s.step() for _ in range(4)])(
    lib.optim.lr_scheduler.OneCycleLR(lib.optim.SGD(_params(lib, ""), lr=0.1, momentum=0.9),
                                      max_lr=0.1, total_steps=2)))
_add("sched[ReduceLROnPlateau,step_none]", lambda lib: lib.optim.lr_scheduler.ReduceLROnPlateau(
    lib.optim.SGD(_params(lib, ""), lr=0.1)).step())

# ---------------------------------------------------------------------------- data
_DS = lambda lib: lib.utils.data.TensorDataset(_x(lib, 4, 2), _x(lib, 4))  # noqa: E731
_DATA = {
    "tensor_dataset_sizes": lambda lib: lib.utils.data.TensorDataset(_x(lib, 4), _x(lib, 3)),
    "tensor_dataset_not_tensor": lambda lib: lib.utils.data.TensorDataset([1, 2]),
    "tensor_dataset_index": lambda lib: _DS(lib)[7],
    "loader_batch_size_zero": lambda lib: lib.utils.data.DataLoader(_DS(lib), batch_size=0),
    "loader_batch_size_neg": lambda lib: lib.utils.data.DataLoader(_DS(lib), batch_size=-1),
    "loader_batch_size_str": lambda lib: lib.utils.data.DataLoader(_DS(lib), batch_size="a"),
    "loader_batch_size_float": lambda lib: list(lib.utils.data.DataLoader(_DS(lib),
                                                                         batch_size=1.5)),
    "loader_shuffle_sampler": lambda lib: lib.utils.data.DataLoader(
        _DS(lib), shuffle=True, sampler=range(4)),
    "loader_batch_sampler_and_size": lambda lib: lib.utils.data.DataLoader(
        _DS(lib), batch_size=2, batch_sampler=[[0, 1]]),
    "loader_drop_last_batch_sampler": lambda lib: lib.utils.data.DataLoader(
        _DS(lib), drop_last=True, batch_sampler=[[0, 1]]),
    "loader_workers_neg": lambda lib: lib.utils.data.DataLoader(_DS(lib), num_workers=-1),
    "loader_timeout_neg": lambda lib: lib.utils.data.DataLoader(_DS(lib), timeout=-1),
    "loader_prefetch_no_workers": lambda lib: lib.utils.data.DataLoader(
        _DS(lib), prefetch_factor=2),
    "loader_persistent_no_workers": lambda lib: lib.utils.data.DataLoader(
        _DS(lib), persistent_workers=True),
    "loader_unknown_kw": lambda lib: lib.utils.data.DataLoader(_DS(lib), nope=1),
    "loader_len_iterable": lambda lib: len(lib.utils.data.DataLoader(iter([1, 2]))),
    "loader_collate_ragged": lambda lib: list(lib.utils.data.DataLoader(
        [_x(lib, 2), _x(lib, 3)], batch_size=2)),
    "loader_collate_str_int": lambda lib: list(lib.utils.data.DataLoader(
        [1, "a"], batch_size=2)),
    "loader_collate_object": lambda lib: list(lib.utils.data.DataLoader(
        [object(), object()], batch_size=2)),
    "loader_collate_dict_keys": lambda lib: list(lib.utils.data.DataLoader(
        [{"a": 1}, {"b": 2}], batch_size=2)),
    "loader_sampler_int": lambda lib: list(lib.utils.data.DataLoader(_DS(lib), sampler=3)),
    "dataset_getitem_abstract": lambda lib: lib.utils.data.Dataset()[0],
    "dataset_len_abstract": lambda lib: len(lib.utils.data.Dataset()),
    "random_split_sum": lambda lib: lib.utils.data.random_split(range(4), [1, 2]),
    "random_split_neg": lambda lib: lib.utils.data.random_split(range(4), [5, -1]),
    "random_split_frac": lambda lib: lib.utils.data.random_split(range(4), [0.5, 0.6]),
    "subset_index": lambda lib: lib.utils.data.Subset(range(4), [9])[0],
    "concat_empty": lambda lib: lib.utils.data.ConcatDataset([]),
    "concat_index": lambda lib: lib.utils.data.ConcatDataset([range(2)])[5],
    "random_sampler_num_samples": lambda lib: lib.utils.data.RandomSampler(range(4),
                                                                           num_samples=0),
    "random_sampler_replacement_str": lambda lib: lib.utils.data.RandomSampler(
        range(4), replacement="a"),
    "batch_sampler_size": lambda lib: lib.utils.data.BatchSampler(range(4), 0, False),
    "batch_sampler_drop_last": lambda lib: lib.utils.data.BatchSampler(range(4), 2, "a"),
    "weighted_sampler_neg": lambda lib: list(lib.utils.data.WeightedRandomSampler(
        [-1.0, 1.0], 2)),
    "weighted_sampler_num": lambda lib: lib.utils.data.WeightedRandomSampler([1.0], 0),
}
for _dk, _df in _DATA.items():
    _add(f"data[{_dk}]", _df)


# ---------------------------------------------------------------------------- autograd.Function
def _fn(lib, forward, backward=None, setup=None, **extra):
    body = {"forward": staticmethod(forward),
            "backward": staticmethod(backward or (lambda ctx, g: g))}
    if setup is not None:
        body["setup_context"] = staticmethod(setup)
    body.update(extra)
    return type("F", (lib.autograd.Function,), body)


_FUNCTION = {
    "call_instance": lambda lib: _fn(lib, lambda ctx, x: x * 2)()(_x(lib, 2)),
    "forward_direct": lambda lib: _fn(lib, lambda ctx, x: x * 2).forward(None, _x(lib, 2)),
    "backward_wrong_count": lambda lib: _fn(lib, lambda ctx, x: x * 2,
                                            lambda ctx, g: (g, g)).apply(
        _x(lib, 2, rg=True)).sum().backward(),
    "backward_wrong_shape": lambda lib: _fn(lib, lambda ctx, x: x * 2,
                                            lambda ctx, g: _x(lib, 3)).apply(
        _x(lib, 2, rg=True)).sum().backward(),
    "backward_not_tensor": lambda lib: _fn(lib, lambda ctx, x: x * 2,
                                           lambda ctx, g: 3).apply(
        _x(lib, 2, rg=True)).sum().backward(),
    "backward_wrong_dtype": lambda lib: _fn(lib, lambda ctx, x: x * 2,
                                            lambda ctx, g: g.double()).apply(
        _x(lib, 2, rg=True)).sum().backward(),
    "no_backward": lambda lib: type("F", (lib.autograd.Function,), {
        "forward": staticmethod(lambda ctx, x: x * 2)}).apply(_x(lib, 2, rg=True)).sum()
    .backward(),
    "save_non_tensor": lambda lib: _fn(lib, lambda ctx, x: (ctx.save_for_backward(3), x * 2)[1]
                                       ).apply(_x(lib, 2, rg=True)),
    "mark_dirty_not_input": lambda lib: _fn(lib, lambda ctx, x: (ctx.mark_dirty(x * 1), x)[1]
                                            ).apply(_x(lib, 2, rg=True) * 1),
    "mark_non_diff_not_output": lambda lib: _fn(
        lib, lambda ctx, x: (ctx.mark_non_differentiable(x), x * 2)[1]).apply(
        _x(lib, 2, rg=True)),
    "apply_kwargs": lambda lib: _fn(lib, lambda ctx, x: x * 2).apply(x=_x(lib, 2)),
    "apply_missing_arg": lambda lib: _fn(lib, lambda ctx, x, y: x * y).apply(_x(lib, 2)),
    "saved_tensors_modified": lambda lib: (lambda F: (lambda x: (lambda y: (
        x.data.add_(0), y.sum().backward()))(F.apply(x)))(_x(lib, 2, rg=True) * 1))(
        _fn(lib, lambda ctx, x: (ctx.save_for_backward(x), x * 2)[1],
            lambda ctx, g: g * ctx.saved_tensors[0])),
    "setup_context_and_ctx_forward": lambda lib: _fn(
        lib, lambda ctx, x: x * 2, setup=lambda ctx, inputs, output: None).apply(_x(lib, 2)),
    "vmap_no_rule": lambda lib: lib.func.vmap(_fn(
        lib, lambda x: x * 2, setup=lambda ctx, inputs, output: None).apply)(_x(lib, 2, 2)),
    "once_differentiable_double": lambda lib: (lambda x: lib.autograd.grad(
        lib.autograd.grad(_fn(lib, lambda ctx, x: x * x, lib.autograd.function
                              .once_differentiable(lambda ctx, g: g * 2)).apply(x).sum(), x,
                          create_graph=True)[0].sum(), x))(_x(lib, 2, rg=True)),
}
for _fk, _ff in _FUNCTION.items():
    _add(f"function[{_fk}]", _ff)

# ---------------------------------------------------------------------------- distributions
_DISTS = {
    "Normal": [(0.0, -1.0), (0.0, 0.0), (float("nan"), 1.0), ("a", 1.0)],
    "Uniform": [(1.0, 0.0), (0.0, float("inf"))],
    "Bernoulli": [(1.5,), (-0.1,), "@both"],
    "Categorical": [([-1.0, 1.0],), ([],), "@both"],
    "Exponential": [(-1.0,), (0.0,)],
    "Gamma": [(-1.0, 1.0), (1.0, -1.0)],
    "Beta": [(0.0, 1.0), (1.0, -2.0)],
    "Poisson": [(-1.0,)],
    "Laplace": [(0.0, -1.0)],
    "LogNormal": [(0.0, -1.0)],
    "Binomial": [(-1, 0.5), (3, 1.5)],
    "Geometric": [(0.0,), (1.5,)],
    "Dirichlet": [([-1.0, 1.0],), (1.0,)],
    "Cauchy": [(0.0, -1.0)],
    "StudentT": [(-1.0,)],
    "MultivariateNormal": [([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]), ([0.0], [[1.0, 0.0],
                                                                             [0.0, 1.0]])],
    "OneHotCategorical": [([-1.0, 1.0],)],
}


def _dist_args(lib, args):
    if args == "@both":
        return (), {"probs": _x(lib, 2).abs() / 2, "logits": _x(lib, 2)}
    return tuple(lib.tensor(a) if isinstance(a, (float, list)) and a != [] else a
                 for a in args), {}


for _dn, _cases in _DISTS.items():
    for _i, _args in enumerate(_cases):
        def _dist(lib, dn=_dn, args=_args):
            a, k = _dist_args(lib, args)
            return getattr(lib.distributions, dn)(*a, validate_args=True, **k)
        _add(f"dist[{_dn},{_i}]", _dist)
_DIST_SAMPLES = {
    # validate_args given: other tests (torch.compile's) may leave PyTorch's default off
    "Normal_log_prob_str": lambda lib: lib.distributions.Normal(
        0.0, 1.0, validate_args=True).log_prob("a"),
    "Bernoulli_log_prob_out": lambda lib: lib.distributions.Bernoulli(
        0.5, validate_args=True).log_prob(lib.tensor(2.0)),
    "Categorical_log_prob_range": lambda lib: lib.distributions.Categorical(
        lib.tensor([0.5, 0.5]), validate_args=True).log_prob(lib.tensor(3)),
    "Uniform_log_prob_out": lambda lib: lib.distributions.Uniform(
        0.0, 1.0, validate_args=True).log_prob(lib.tensor(2.0)),
    "Exponential_log_prob_neg": lambda lib: lib.distributions.Exponential(
        1.0, validate_args=True).log_prob(lib.tensor(-1.0)),
    "Normal_rsample_shape": lambda lib: lib.distributions.Normal(0.0, 1.0).rsample("a"),
    "Normal_sample_neg": lambda lib: lib.distributions.Normal(0.0, 1.0).sample((-1,)),
    "Categorical_rsample": lambda lib: lib.distributions.Categorical(
        lib.tensor([0.5, 0.5])).rsample(),
    "kl_unregistered": lambda lib: lib.distributions.kl_divergence(
        lib.distributions.Normal(0.0, 1.0), lib.distributions.Poisson(1.0)),
    "Normal_shape_mismatch": lambda lib: lib.distributions.Normal(_x(lib, 2), _x(lib, 3).exp()),
    "Normal_no_args": lambda lib: lib.distributions.Normal(),
    "Independent_too_many": lambda lib: lib.distributions.Independent(
        lib.distributions.Normal(_x(lib, 2), 1.0), 2),
    "Categorical_entropy_nan": lambda lib: lib.distributions.Categorical(
        logits=lib.tensor([math.nan, 0.0]), validate_args=True),
}
for _dk, _df in _DIST_SAMPLES.items():
    _add(f"dist[{_dk}]", _df)
