"""PyTorch's reparametrised gradients of Gamma and Dirichlet samples, on NumPy arrays.

Layer 3. ``d sample / d alpha`` at a fixed quantile has no closed form; PyTorch's CPU kernels
(``standard_gamma_grad_one`` and ``dirichlet_grad_one`` in ATen) use a fixed set of series,
saddle-point and rational approximations chosen per element. A reparametrised estimator (a VAE
with a Dirichlet latent, Pyro's ELBO with a Beta guide) therefore only reproduces PyTorch's
gradients, and so its training run, if the same approximation is evaluated. These functions
evaluate them branch by branch with ATen's precision rules: the Gamma gradient entirely in
double; the Dirichlet gradient's small-``x`` series in the tensor's own dtype (float32
arithmetic for a float32 tensor, each operation rounded), its saddle-point and rational
branches in double. Transcendental functions are computed in double and rounded to the
working dtype (libm's float functions are correctly rounded in all but rare cases).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["dirichlet_grad", "standard_gamma_grad"]

_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
_GAMMA_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089,
     0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
     -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
     0.00085092367, -1.5247877e-07]])
# [p or q][power of u][power of a][power of b]
_DIRICHLET_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _f(value: float, dt: Any) -> Any:
    """A C literal such as ``0.8f`` as the double it becomes in a double expression."""
    return np.float64(dt(value))


def _log(v: Any, dt: Any) -> Any:
    return np.log(v.astype(np.float64)).astype(dt)


def _pow(v: Any, e: Any, dt: Any) -> Any:
    return np.power(v.astype(np.float64), np.asarray(e, np.float64)).astype(dt)


def _digamma(x: Any, dt: Any) -> Any:
    """ATen's ``digamma_one<dt, double>``: the shifts ``1/x`` and the final ``log`` and
    ``0.5/x`` in `dt`, the running sum and the asymptotic series in double."""
    x = x.astype(dt, copy=True)
    extra = np.zeros(x.shape)
    pole = (x == 0) | ((x < 0) & (x == np.floor(x)))
    neg = (x < 0) & ~pole
    pi = dt(np.pi)
    extra[neg] = (-pi / np.tan((pi * x[neg]).astype(np.float64)).astype(dt)).astype(np.float64)
    x[neg] = dt(1) - x[neg]
    x[pole] = dt(20)  # placeholder, replaced by inf below
    result = np.zeros(x.shape)
    low = x < 10
    while low.any():
        result[low] -= (dt(1) / x[low]).astype(np.float64)
        x[low] += dt(1)
        low = x < 10
    y = np.zeros(x.shape)
    big = x < dt(1.0e17)
    z = 1.0 / (x[big] * x[big]).astype(np.float64)
    series = np.full(z.shape, _DIGAMMA_A[0])
    for coef in _DIGAMMA_A[1:]:
        series = series * z + coef
    y[big] = z * series
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (((result + _log(x, dt).astype(np.float64)) - (dt(0.5) / x).astype(np.float64))
               - y) + extra
    out[x == 10] = (result + _PSI_10 + extra)[x == 10]
    out[pole] = np.inf
    return out.astype(dt)


def _gamma_series(alpha: Any, x: Any) -> Any:
    """Small ``x``: Taylor series of the regularised incomplete gamma function."""
    numer = np.ones_like(x)
    denom = alpha.copy()
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = np.power(x, alpha)
    pdf = np.power(x, alpha - 1) * np.exp(-x)
    cdf_alpha = (np.log(x) - _digamma(alpha, np.float64)) * (pow_x_alpha * series1) \
        - pow_x_alpha * series2
    result = -cdf_alpha / pdf
    return np.where(np.isnan(result), 0.0, result)


def _gamma_saddle(alpha: Any, x: Any) -> Any:
    """Large ``alpha``: Rice saddle-point expansion (a polynomial near the mode)."""
    near = (_f(0.9, np.float32) * alpha <= x) & (x <= _f(1.1, np.float32) * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha \
        + alpha * (107 + 3600 * x)
    poly = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = np.power(x - alpha - alpha * np.log(x / alpha), -1.5)
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = np.log(x / alpha) * term23 - np.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    return np.where(near, poly, -stirling * (x * term1) / denom)


def _gamma_rational(alpha: Any, x: Any) -> Any:
    u = np.log(x / alpha)
    v = np.log(alpha)
    c = [_GAMMA_UV[0, i] + u * (_GAMMA_UV[1, i] + u * _GAMMA_UV[2, i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return np.exp(p / q)


def standard_gamma_grad(alpha: Any, x: Any) -> Any:
    """``d x / d alpha`` of ``Gamma(alpha, 1)`` samples `x`, as ATen's
    ``standard_gamma_grad_one`` (in double, cast to the result dtype)."""
    dt = np.result_type(alpha, x)
    a, xs = np.broadcast_arrays(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
    a, xs = a.ravel(), xs.ravel()
    out = np.empty(a.shape)
    small = xs < _f(0.8, np.float32)
    large = ~small & (a > 8.0)
    rest = ~small & ~large
    with np.errstate(all="ignore"):
        for mask, rule in ((small, _gamma_series), (large, _gamma_saddle), (rest, _gamma_rational)):
            if mask.any():
                out[mask] = rule(a[mask], xs[mask])
    return out.astype(dt).reshape(np.broadcast_shapes(np.shape(alpha), np.shape(x)))


def _beta_alpha_small(x: Any, alpha: Any, beta: Any, dt: Any) -> Any:
    """``x`` near 0: Taylor expansion in `dt` arithmetic."""
    factor = _digamma(alpha, dt) - _digamma(alpha + beta, dt) - _log(x, dt)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + dt(1) / alpha)
    for i in range(1, 11):
        ci = dt(i)
        numer = numer * ((ci - beta) * x / ci)
        denom = alpha + ci
        series = series + numer / denom * (factor + dt(1) / denom)
    result = x * _pow(dt(1) - x, -beta, dt) * series
    return np.where(np.isnan(result), dt(0), result)


def _beta_beta_small(x: Any, alpha: Any, beta: Any, dt: Any) -> Any:
    """``x`` near 0, derivative in ``beta``: Taylor expansion in `dt` arithmetic."""
    factor = _digamma(alpha + beta, dt) - _digamma(beta, dt)
    numer = np.ones_like(x)
    betas = np.ones_like(x)
    dbetas = np.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        ci = dt(i)
        numer = numer * (-x / ci)
        dbetas = dbetas * (beta - ci) + betas
        betas = betas * (beta - ci)
        series = series + numer / (alpha + ci) * (dbetas + factor * betas)
    result = -_pow(dt(1) - x, dt(1) - beta, dt) * series
    return np.where(np.isnan(result), dt(0), result)


def _beta_alpha_mid(x: Any, alpha: Any, beta: Any) -> Any:
    """Both concentrations large: Rice saddle-point expansion in double."""
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * std <= x) & (x <= mean + 0.1 * std)
    b2 = beta * beta
    poly = 47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) \
        * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) \
        / (1 + 1 / (12 * total) + 1 / (288 * total * total))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (np.sqrt(2 * alpha / beta) * np.power(total, 1.5) * axbx * axbx)
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = np.power(beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x)),
                     -1.5)
    term1234 = term1 + term2 * (term3 + np.where(x < mean, term4, -term4))
    return np.where(near, at_mean, stirling * prefactor * term1234)


def _beta_rational(x: Any, alpha: Any, total: Any, dt: Any) -> Any:
    """Otherwise: a rational correction to an analytic approximation, in double."""
    u = np.log(x)
    a = np.log(alpha) - u
    b = np.log(total) - a
    pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
    p = np.zeros(x.shape)
    q = np.zeros(x.shape)
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _DIRICHLET_C[0, i, j], _DIRICHLET_C[1, i, j]
            p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    gap = (_digamma(total.astype(dt), dt) - _digamma(alpha.astype(dt), dt)).astype(np.float64)
    return p / q * (x * gap / (total - alpha))


def dirichlet_grad(x: Any, alpha: Any, total: Any) -> Any:
    """ATen's ``dirichlet_grad_one``: ``-(d/dalpha cdf(x; alpha, total - alpha)) / pdf / (1-x)``
    of Beta-marginal samples `x`, elementwise (the ``_dirichlet_grad`` kernel)."""
    dt = np.result_type(x, alpha, total).type
    shape = np.broadcast_shapes(np.shape(x), np.shape(alpha), np.shape(total))
    xs, al, to = (np.broadcast_to(np.asarray(v, dt), shape).ravel() for v in (x, alpha, total))
    beta = to - al
    boundary = to * xs * (dt(1) - xs)
    near0 = (xs <= dt(0.5)) & (boundary < dt(2.5))
    near1 = ~near0 & (xs >= dt(0.5)) & (boundary < dt(0.75))
    mid = ~near0 & ~near1 & (al > 6) & (beta > 6)
    rest = ~(near0 | near1 | mid)
    out = np.empty(xs.shape, dt)
    x64, a64, t64 = (v.astype(np.float64) for v in (xs, al, to))
    with np.errstate(all="ignore"):
        if near0.any():
            out[near0] = _beta_alpha_small(xs[near0], al[near0], beta[near0], dt)
        if near1.any():
            out[near1] = -_beta_beta_small(dt(1) - xs[near1], beta[near1], al[near1], dt)
        if mid.any():
            out[mid] = _beta_alpha_mid(x64[mid], a64[mid], t64[mid] - a64[mid]).astype(dt)
        if rest.any():
            out[rest] = _beta_rational(x64[rest], a64[rest], t64[rest], dt).astype(dt)
    return out.reshape(shape)
