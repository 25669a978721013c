"""Jacobians, Hessians and Hessian-vector products (the torch.func tutorial).

Run: ``python examples/func_jacobians_hessians.py`` (hookgrad) or pass ``--torch``.
"""

import sys

import numpy as np


def run(torch):
    """jacrev/jacfwd of a linear+tanh layer, batched Jacobians, Hessians and an HVP."""
    fn, F = torch.func, torch.nn.functional
    grad, hessian, jacfwd, jacrev, jvp, vjp, vmap = (fn.grad, fn.hessian, fn.jacfwd, fn.jacrev,
                                                    fn.jvp, fn.vjp, fn.vmap)


    rng = np.random.default_rng(2)
    D = 8
    weight = torch.tensor(rng.normal(size=(D, D)).astype(np.float32))
    bias = torch.tensor(rng.normal(size=D).astype(np.float32))
    x = torch.tensor(rng.normal(size=D).astype(np.float32))

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    out = {"jacrev": jacrev(predict, argnums=2)(weight, bias, x),
           "jacfwd": jacfwd(predict, argnums=2)(weight, bias, x)}
    ft_w, ft_b = jacrev(predict, argnums=(0, 1))(weight, bias, x)
    out["jac_weight"], out["jac_bias"] = ft_w, ft_b
    xs = torch.tensor(rng.normal(size=(5, D)).astype(np.float32))
    out["batched_jacobian"] = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))(
        weight, bias, xs)
    out["hessian"] = hessian(predict, argnums=2)(weight, bias, x)
    out["hess_fwdrev"] = jacfwd(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)

    def f(v):
        return v.sin().sum()

    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = vjp(grad(f), *primals)
        return vjp_fn(*tangents)

    t = torch.tensor(rng.normal(size=D).astype(np.float32))
    out["hvp"] = hvp(f, (x,), (t,))
    out["hvp_revrev"] = hvp_revrev(f, (x,), (t,))[0]
    return {k: v.detach().numpy() for k, v in out.items()}


if __name__ == "__main__":
    if "--torch" in sys.argv:
        import torch as lib
    else:
        import hookgrad as lib
    for name, value in run(lib).items():
        print(f"{name:16} shape={value.shape} sum={value.sum():.6f}")
