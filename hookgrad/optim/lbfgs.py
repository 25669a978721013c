"""L-BFGS, closure-based. Mirrors ``torch.optim.LBFGS``.

Written with hookgrad tensor ops under ``no_grad`` (the closure runs with grad enabled), in the
order PyTorch's implementation uses, so every closure call sees the same parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._functional.shape import cat
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import enable_grad, no_grad
from hookgrad.optim._line_search import strong_wolfe
from hookgrad.optim.optimizer import Optimizer, _check_lr

__all__ = ["LBFGS"]


def _scalar(v: Any) -> float:
    return float(v) if isinstance(v, Tensor) else v


class LBFGS(Optimizer):
    """Limited-memory BFGS over all parameters flattened into one vector.

    Args:
        params: tensors to optimize (one parameter group only).
        lr: learning rate (default 1).
        max_iter: iterations per ``step`` (default 20).
        max_eval: closure evaluations per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient entry is at most this.
        tolerance_change: stop when the step or the loss changes less than this.
        history_size: curvature pairs kept (default 100).
        line_search_fn: ``None`` (fixed step) or ``"strong_wolfe"``.

    Raises:
        ValueError: a negative learning rate, or more than one parameter group.

    Example:
        >>> import hookgrad
        >>> w = hookgrad.tensor([3.0], requires_grad=True)
        >>> opt = hookgrad.optim.LBFGS([w])
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = ((w - 1) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure)
        >>> round(w.item(), 4)
        1.0

    Mirrors: ``torch.optim.LBFGS``.
    """

    def __init__(self, params: Any, lr: float = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        views = [p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
                 for p in self._params]
        return cat(views, 0)

    def _add_grad(self, step_size: Any, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=_scalar(step_size))
            offset += n

    def _clone_param(self) -> list[Tensor]:
        return [p.clone() for p in self._params]

    def _set_param(self, params_data: list[Tensor]) -> None:
        for p, data in zip(self._params, params_data, strict=True):
            p.copy_(data)

    def _directional_evaluate(self, closure: Callable, x: list[Tensor], t: Any,
                              d: Tensor) -> tuple[float, Tensor]:
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def _direction(self, state: dict, flat_grad: Tensor, hist: dict) -> Tensor:
        """The two-loop recursion: the quasi-Newton direction from the stored pairs."""
        if state["n_iter"] == 1:
            hist.update(old_dirs=[], old_stps=[], ro=[], H_diag=1)
            return flat_grad.neg()
        y = flat_grad.sub(hist["prev_flat_grad"])
        s = hist["d"].mul(hist["t"])
        ys = y.dot(s)
        if ys > 1e-10:
            if len(hist["old_dirs"]) == self.param_groups[0]["history_size"]:
                for key in ("old_dirs", "old_stps", "ro"):
                    hist[key].pop(0)
            hist["old_dirs"].append(y)
            hist["old_stps"].append(s)
            hist["ro"].append(1.0 / ys)
            hist["H_diag"] = ys / y.dot(y)
        old_dirs, old_stps, ro = hist["old_dirs"], hist["old_stps"], hist["ro"]
        if "al" not in state:
            state["al"] = [None] * self.param_groups[0]["history_size"]
        al = state["al"]
        q = flat_grad.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-_scalar(al[i]))
        r = q.mul(hist["H_diag"])
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=_scalar(al[i] - be_i))
        return r

    @no_grad()
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; `closure` recomputes the loss and grads.

        Returns:
            The loss of the first closure call.

        Mirrors: ``torch.optim.LBFGS.step``.
        """
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr, max_iter, max_eval = _scalar(group["lr"]), group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tol_grad:
            return orig_loss
        hist = {k: state.get(k) for k in ("d", "t", "old_dirs", "old_stps", "ro", "H_diag",
                                          "prev_flat_grad", "prev_loss")}
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            d = hist["d"] = self._direction(state, flat_grad, hist)
            if hist["prev_flat_grad"] is None:
                hist["prev_flat_grad"] = flat_grad.clone()
            else:
                hist["prev_flat_grad"].copy_(flat_grad)
            hist["prev_loss"] = prev_loss = loss
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tol_change:
                hist["t"] = t
                break
            ls_evals, opt_cond = 0, False
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: list[Tensor], t: Any, d: Tensor) -> tuple[float, Tensor]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_evals = strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = bool(flat_grad.abs().max() <= tol_grad)
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = bool(flat_grad.abs().max() <= tol_grad)
                    ls_evals = 1
            hist["t"] = t
            current_evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == max_iter or current_evals >= max_eval or opt_cond
                    or d.mul(t).abs().max() <= tol_change or abs(loss - prev_loss) < tol_change):
                break
        state.update(hist)
        return orig_loss
