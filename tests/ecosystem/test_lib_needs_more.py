"""More of what real libraries (pyro, gpytorch, ptflops, torchopt, ...) rely on, tested without them.

Each test is an oracle test of a hookgrad behaviour that a library needed at import or on its
main path, found by running the library unmodified under ``python -m hookgrad.run``.
"""

from __future__ import annotations

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def test_validate_args_default_is_a_class_attribute(torch):
    """pyro reads ``Distribution._validate_args``; instances follow later default changes."""

    def scenario(L):
        D = L.distributions
        out = [D.Distribution._validate_args]
        loose = D.Normal(L.tensor(0.0), L.tensor(1.0))
        strict = D.Normal(L.tensor(0.0), L.tensor(1.0), validate_args=True)
        try:
            D.Distribution.set_default_validate_args(False)
            out += [D.Distribution._validate_args, loose._validate_args, strict._validate_args,
                    "_validate_args" in vars(loose), "_validate_args" in vars(strict)]
            out.append(D.Normal(L.tensor(0.0), L.tensor(-1.0)).scale.item())  # not validated
        finally:
            D.Distribution.set_default_validate_args(True)
        out.append(loose._validate_args)
        with pytest.raises(ValueError):
            D.Normal(L.tensor(0.0), L.tensor(-1.0))
        return out

    assert scenario(hookgrad) == scenario(torch)
