"""The strong-Wolfe line search of `LBFGS` (Nocedal & Wright, algorithms 3.5 and 3.6), written
the way PyTorch's ``torch.optim.lbfgs`` does so that each trial step, and so each closure call,
is the same."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._tensor import Tensor


def cubic_interpolate(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any,
                      bounds: tuple[Any, Any] | None = None) -> Any:
    """Minimiser of the cubic through two points with their slopes, clamped to `bounds`."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


class _Bracket:
    """The interval the zoom phase narrows: step sizes, losses, gradients, slopes."""

    def __init__(self, t: list, f: list, g: list, gtd: list) -> None:
        self.t, self.f, self.g, self.gtd = t, f, g, gtd

    def order(self) -> tuple[int, int]:
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)

    def set(self, pos: int, t: Any, f: Any, g: Tensor, gtd: Any) -> None:
        self.t[pos], self.f[pos], self.g[pos], self.gtd[pos] = t, f, g, gtd


def _bracket_phase(obj_func: Callable, x: Any, t: Any, d: Tensor, f: float, g: Tensor,
                   gtd: Any, c1: float, c2: float, max_ls: int) -> tuple:
    """Grow the step until an interval holds a point satisfying the strong Wolfe conditions."""
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            return _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()],
                            [gtd_prev, gtd_new]), False, ls_iter, evals
        if abs(gtd_new) <= -c2 * gtd:
            return _Bracket([t], [f_new], [g_new], [gtd_new]), True, ls_iter, evals
        if gtd_new >= 0:
            return _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()],
                            [gtd_prev, gtd_new]), False, ls_iter, evals
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        tmp = t
        t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                              bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    return _Bracket([0, t], [f, f_new], [g, g_new], [None, None]), False, ls_iter, evals


def strong_wolfe(obj_func: Callable, x: Any, t: Any, d: Tensor, f: float, g: Tensor, gtd: Any,
                 c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                 max_ls: int = 25) -> tuple[Any, Tensor, Any, int]:
    """``(loss, flat grad, step size, closure evaluations)`` of a strong-Wolfe step along `d`."""
    d_norm = d.abs().max()
    g = g.clone()
    br, done, ls_iter, evals = _bracket_phase(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls)
    insuf_progress = False
    low, high = br.order()
    while not done and ls_iter < max_ls:
        if abs(br.t[1] - br.t[0]) * d_norm < tolerance_change:
            break
        t = cubic_interpolate(br.t[0], br.f[0], br.gtd[0], br.t[1], br.f[1], br.gtd[1])
        lo_t, hi_t = min(br.t), max(br.t)
        eps = 0.1 * (hi_t - lo_t)
        if min(hi_t - t, t - lo_t) < eps:
            if insuf_progress or t >= hi_t or t <= lo_t:
                t = hi_t - eps if abs(t - hi_t) < abs(t - lo_t) else lo_t + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= br.f[low]:
            br.set(high, t, f_new, g_new.clone(), gtd_new)
            low, high = br.order()
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br.t[high] - br.t[low]) >= 0:
                br.set(high, br.t[low], br.f[low], br.g[low], br.gtd[low])
            br.set(low, t, f_new, g_new.clone(), gtd_new)
    return br.f[low], br.g[low], br.t[low], evals
