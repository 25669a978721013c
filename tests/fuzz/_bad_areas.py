"""torch.func transforms with bad ``in_dims``/``out_dims``/``argnums``, distributions with
invalid parameters under ``validate_args``, and optimizer/scheduler ``load_state_dict`` of
malformed state, in the bad-input corpus; a failing ``load_state_dict`` leaves the optimizer or
scheduler as PyTorch leaves it (see `_bad_inputs` for the contract)."""

from __future__ import annotations

import math

import numpy as np

from tests.fuzz._bad_inputs import _add, _add_stateful
from tests.fuzz._bad_ops import _x


# ---------------------------------------------------------------------------- torch.func
def _f_sum(x):
    return x.sin().sum()


def _f_two(x, y):
    return (x * y).sum()


_FUNC = {
    "vmap_in_dims_len": lambda lib: lib.func.vmap(_f_two, in_dims=(0,))(_x(lib, 2, 3),
                                                                         _x(lib, 2, 3)),
    "vmap_in_dims_range": lambda lib: lib.func.vmap(lambda x: x, in_dims=3)(_x(lib, 2, 3)),
    "vmap_in_dims_float": lambda lib: lib.func.vmap(lambda x: x, in_dims=0.5)(_x(lib, 2)),
    "vmap_in_dims_str": lambda lib: lib.func.vmap(lambda x: x, in_dims="a")(_x(lib, 2)),
    "vmap_sizes_differ": lambda lib: lib.func.vmap(_f_two)(_x(lib, 2, 3), _x(lib, 3, 3)),
    "vmap_no_tensor": lambda lib: lib.func.vmap(lambda x: x)(3.0),
    "vmap_all_none": lambda lib: lib.func.vmap(lambda x: x, in_dims=None)(_x(lib, 2)),
    "vmap_out_dims_range": lambda lib: lib.func.vmap(lambda x: x * 2, out_dims=2)(_x(lib, 2)),
    "vmap_out_dims_len": lambda lib: lib.func.vmap(lambda x: x * 2, out_dims=(0, 0))(
        _x(lib, 2)),
    "vmap_return_int": lambda lib: lib.func.vmap(lambda x: 3)(_x(lib, 2)),
    "vmap_randomness": lambda lib: lib.func.vmap(lambda x: x, randomness="nope")(_x(lib, 2)),
    "vmap_chunk_zero": lambda lib: lib.func.vmap(lambda x: x, chunk_size=0)(_x(lib, 2)),
    "vmap_0d_input": lambda lib: lib.func.vmap(lambda x: x)(lib.tensor(1.0)),
    "vmap_item": lambda lib: lib.func.vmap(lambda x: x.item())(_x(lib, 2)),
    "vmap_not_callable": lambda lib: lib.func.vmap(3)(_x(lib, 2)),
    "grad_argnums_range": lambda lib: lib.func.grad(_f_sum, argnums=1)(_x(lib, 3)),
    "grad_argnums_float": lambda lib: lib.func.grad(_f_sum, argnums=0.5)(_x(lib, 3)),
    "grad_argnums_empty": lambda lib: lib.func.grad(_f_sum, argnums=())(_x(lib, 3)),
    "grad_argnums_neg_range": lambda lib: lib.func.grad(_f_sum, argnums=-2)(_x(lib, 3)),
    "grad_non_scalar": lambda lib: lib.func.grad(lambda x: x * 2)(_x(lib, 3)),
    "grad_int_input": lambda lib: lib.func.grad(lambda x: x.sum())(lib.ones(3,
                                                                            dtype=lib.int64)),
    "grad_returns_int": lambda lib: lib.func.grad(lambda x: 3)(_x(lib, 3)),
    "grad_has_aux_not_tuple": lambda lib: lib.func.grad(_f_sum, has_aux=True)(_x(lib, 3)),
    "grad_and_value_argnums": lambda lib: lib.func.grad_and_value(_f_sum, argnums=(0, 1))(
        _x(lib, 3)),
    "vjp_cotangent_shape": lambda lib: lib.func.vjp(lambda x: x * 2, _x(lib, 3))[1](
        _x(lib, 4)),
    "vjp_not_tensor": lambda lib: lib.func.vjp(lambda x: x * 2, [1.0]),
    "jvp_tangent_shape": lambda lib: lib.func.jvp(lambda x: x * 2, (_x(lib, 3),),
                                                   (_x(lib, 4),)),
    "jvp_not_tuple": lambda lib: lib.func.jvp(lambda x: x * 2, _x(lib, 3), _x(lib, 3)),
    "jvp_len": lambda lib: lib.func.jvp(_f_two, (_x(lib, 3), _x(lib, 3)), (_x(lib, 3),)),
    "jvp_dtype": lambda lib: lib.func.jvp(lambda x: x * 2, (_x(lib, 3),),
                                           (_x(lib, 3, dtype="float64"),)),
    "jacrev_argnums_range": lambda lib: lib.func.jacrev(lambda x: x * 2, argnums=2)(
        _x(lib, 3)),
    "jacfwd_argnums_dup": lambda lib: lib.func.jacfwd(_f_two, argnums=(0, 0))(
        _x(lib, 3), _x(lib, 3)),
    "hessian_argnums_str": lambda lib: lib.func.hessian(_f_sum, argnums="a")(_x(lib, 3)),
    "functional_call_unexpected": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"nope": _x(lib, 2)}, (_x(lib, 1, 2),), strict=True),
    "functional_call_missing_strict": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"weight": _x(lib, 2, 2)}, (_x(lib, 1, 2),), strict=True),
    "functional_call_shape": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"weight": _x(lib, 3, 3)}, (_x(lib, 1, 2),)),
    "functional_call_dup_dicts": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), ({"weight": _x(lib, 2, 2)}, {"weight": _x(lib, 2, 2)}),
        (_x(lib, 1, 2),)),
    "stack_module_state_empty": lambda lib: lib.func.stack_module_state([]),
    "linearize_not_tensor": lambda lib: lib.func.linearize(lambda x: x, 3.0),
}
for _k, _f in _FUNC.items():
    _add(f"func[{_k}]", _f)

# ---------------------------------------------------------------------------- distributions
_DIST2 = {
    "Normal[loc_inf]": ("Normal", (math.inf, 1.0)),
    "Normal[scale_neg_tensor]": ("Normal", ("@v", [0.0, 0.0], "@v", [1.0, -1.0])),
    "Uniform[equal]": ("Uniform", (1.0, 1.0)),
    "Bernoulli[logits_nan]": ("Bernoulli", "@logits_nan"),
    "Categorical[probs_nan]": ("Categorical", ("@v", [math.nan, 1.0])),
    "Categorical[probs_0d]": ("Categorical", ("@v", 0.5)),
    "Binomial[probs_neg]": ("Binomial", (3, -0.5)),
    "Binomial[count_float_neg]": ("Binomial", (-2.5, 0.5)),
    "Multinomial[probs_neg]": ("Multinomial", (3, "@v", [-0.5, 1.5])),
    "Gamma[rate_zero]": ("Gamma", (1.0, 0.0)),
    "Beta[nan]": ("Beta", (math.nan, 1.0)),
    "Chi2[neg]": ("Chi2", (-1.0,)),
    "HalfNormal[neg]": ("HalfNormal", (-1.0,)),
    "HalfCauchy[zero]": ("HalfCauchy", (0.0,)),
    "Pareto[neg_scale]": ("Pareto", (-1.0, 1.0)),
    "Weibull[neg]": ("Weibull", (1.0, -1.0)),
    "Gumbel[neg]": ("Gumbel", (0.0, -1.0)),
    "VonMises[neg]": ("VonMises", (0.0, -1.0)),
    "LogisticNormal[neg]": ("LogisticNormal", ("@v", [0.0], "@v", [-1.0])),
    "FisherSnedecor[neg]": ("FisherSnedecor", (-1.0, 1.0)),
    "Kumaraswamy[neg]": ("Kumaraswamy", (-1.0, 1.0)),
    "NegativeBinomial[neg]": ("NegativeBinomial", (-1.0, 0.5)),
    "ContinuousBernoulli[big]": ("ContinuousBernoulli", (1.5,)),
    "RelaxedBernoulli[neg_temp]": ("RelaxedBernoulli", (-1.0, 0.5)),
    "LowRankMultivariateNormal[neg]": ("LowRankMultivariateNormal",
                                        ("@v", [0.0, 0.0], "@v", [[1.0], [1.0]], "@v",
                                         [-1.0, 1.0])),
    "MultivariateNormal[scale_tril_bad]": ("MultivariateNormal",
                                           "@scale_tril_bad"),
    "MultivariateNormal[precision_bad]": ("MultivariateNormal", "@precision_bad"),
    "MultivariateNormal[two_params]": ("MultivariateNormal", "@two_params"),
    "MultivariateNormal[loc_0d]": ("MultivariateNormal", ("@v", 0.0, "@v", [[1.0]])),
    "Wishart[df_small]": ("Wishart", "@wishart_df"),
    "LKJCholesky[neg]": ("LKJCholesky", (2, -1.0)),
    "Geometric[logits_nan]": ("Geometric", "@logits_nan"),
    "Poisson[nan]": ("Poisson", (math.nan,)),
}


def _dist_call(lib, name, spec):
    D = getattr(lib.distributions, name)
    if spec == "@logits_nan":
        return D(logits=lib.tensor(math.nan), validate_args=True)
    if spec == "@scale_tril_bad":
        return D(lib.zeros(2), scale_tril=lib.tensor([[1.0, 0.0], [1.0, -1.0]]),
                 validate_args=True)
    if spec == "@precision_bad":
        return D(lib.zeros(2), precision_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]]),
                 validate_args=True)
    if spec == "@two_params":
        return D(lib.zeros(2), covariance_matrix=lib.eye(2), scale_tril=lib.eye(2))
    if spec == "@wishart_df":
        return D(df=lib.tensor(0.5), covariance_matrix=lib.eye(2), validate_args=True)
    args, it = [], iter(spec)
    for a in it:
        args.append(lib.tensor(next(it)) if a == "@v" else
                    lib.tensor(a) if isinstance(a, float) else a)
    return D(*args, validate_args=True)


for _k, (_dn, _spec) in _DIST2.items():
    _add(f"dist2[{_k}]", lambda lib, dn=_dn, spec=_spec: _dist_call(lib, dn, spec))
_DIST_USE = {
    "Normal_log_prob_nan_validate": lambda lib: lib.distributions.Normal(
        0.0, 1.0, validate_args=True).log_prob(lib.tensor(math.nan)),
    "Poisson_log_prob_float": lambda lib: lib.distributions.Poisson(
        lib.tensor(1.0), validate_args=True).log_prob(lib.tensor(0.5)),
    "Beta_log_prob_out": lambda lib: lib.distributions.Beta(
        lib.tensor(1.0), lib.tensor(1.0), validate_args=True).log_prob(lib.tensor(1.5)),
    "Dirichlet_log_prob_sum": lambda lib: lib.distributions.Dirichlet(
        lib.ones(2), validate_args=True).log_prob(lib.tensor([0.2, 0.2])),
    "MultivariateNormal_log_prob_shape": lambda lib: lib.distributions.MultivariateNormal(
        lib.zeros(2), lib.eye(2), validate_args=True).log_prob(lib.zeros(3)),
    "Categorical_sample_shape_str": lambda lib: lib.distributions.Categorical(
        lib.tensor([0.5, 0.5])).sample("a"),
    "Normal_cdf_str": lambda lib: lib.distributions.Normal(0.0, 1.0, validate_args=True).cdf(
        "a"),
    "Normal_icdf_range": lambda lib: lib.distributions.Normal(
        0.0, 1.0, validate_args=True).icdf(lib.tensor(2.0)),
    "Exponential_icdf_neg": lambda lib: lib.distributions.Exponential(
        1.0, validate_args=True).icdf(lib.tensor(-0.5)),
    "Binomial_log_prob_big": lambda lib: lib.distributions.Binomial(
        3, lib.tensor(0.5), validate_args=True).log_prob(lib.tensor(5.0)),
    "Independent_bad_ndims": lambda lib: lib.distributions.Independent(
        lib.distributions.Normal(_x(lib, 2), 1.0), -1),
    "Transformed_not_transform": lambda lib: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(0.0, 1.0), [3]),
    "expand_bad": lambda lib: lib.distributions.Normal(_x(lib, 3), 1.0).expand((2,)),
    "kl_mvn_dims": lambda lib: lib.distributions.kl_divergence(
        lib.distributions.MultivariateNormal(lib.zeros(2), lib.eye(2)),
        lib.distributions.MultivariateNormal(lib.zeros(3), lib.eye(3))),
    "set_default_validate_str": lambda lib: lib.distributions.Distribution
    .set_default_validate_args("a"),
}
for _k, _f in _DIST_USE.items():
    _add(f"dist_use[{_k}]", _f)


# ---------------------------------------------------------------------------- state dicts
def _opt(lib, cls="Adam", **kw):
    lib.manual_seed(0)
    p = lib.nn.Parameter(lib.arange(4.0).reshape(2, 2) / 3)
    opt = getattr(lib.optim, cls)([p], **({"lr": 0.1} | kw))
    p.grad = lib.ones(2, 2)
    opt.step()
    return opt


def _observe_opt(opt):
    sd = opt.state_dict()
    out = []
    for k in sorted(sd["state"]):
        for n, v in sorted(sd["state"][k].items()):
            out.append(np.array(v.detach().numpy(), copy=True) if hasattr(v, "detach") else v)
    out += [sorted((k, str(v)) for k, v in g.items()) for g in sd["param_groups"]]
    return out


_OPT_SD = {
    "not_dict": lambda lib, o: o.load_state_dict([1]),
    "none": lambda lib, o: o.load_state_dict(None),
    "state_not_dict": lambda lib, o: o.load_state_dict({"state": [], "param_groups": o
                                                        .state_dict()["param_groups"]}),
    "groups_not_list": lambda lib, o: o.load_state_dict({"state": {}, "param_groups": 3}),
    "group_not_dict": lambda lib, o: o.load_state_dict({"state": {}, "param_groups": [3]}),
    "group_no_params": lambda lib, o: o.load_state_dict({"state": {}, "param_groups": [
        {"lr": 0.1}]}),
    "two_groups": lambda lib, o: o.load_state_dict({"state": {}, "param_groups": [
        dict(o.state_dict()["param_groups"][0]), dict(o.state_dict()["param_groups"][0])]}),
    "state_shape": "@state_shape",
    "foreign_state": "@foreign",
    "empty": lambda lib, o: o.load_state_dict({}),
}


def _state_shape(lib, o):
    sd = o.state_dict()
    sd["state"][0]["exp_avg"] = lib.ones(5)
    o.load_state_dict(sd)
    o.param_groups[0]["params"][0].grad = lib.ones(2, 2)
    o.step()


def _foreign(lib, o):
    sgd = lib.optim.SGD([lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))], lr=0.1)
    o.load_state_dict(sgd.state_dict())


for _k, _f in _OPT_SD.items():
    _fn = {"@state_shape": _state_shape, "@foreign": _foreign}.get(_f, _f) \
        if isinstance(_f, str) else _f
    _add_stateful(f"optim_sd[{_k}]", _opt, _fn, _observe_opt)


def _sched(lib):
    opt = _opt(lib, "SGD", momentum=0.9)
    s = lib.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
    opt.step()
    s.step()
    return s


def _observe_sched(s):
    return [sorted((k, str(v)) for k, v in s.state_dict().items()),
            [g["lr"] for g in s.optimizer.param_groups]]


_SCHED_SD = {
    "not_dict": lambda lib, s: s.load_state_dict([1]),
    "none": lambda lib, s: s.load_state_dict(None),
    "step_str": lambda lib, s: s.step("a"),
    "get_last_lr_before": lambda lib, s: lib.optim.lr_scheduler.StepLR(
        lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1), 0).step(),
}
for _k, _f in _SCHED_SD.items():
    _add_stateful(f"sched_sd[{_k}]", _sched, _f, _observe_sched)
