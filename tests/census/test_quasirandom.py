"""``torch.quasirandom.SobolEngine``: unscrambled and scrambled points equal PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytest.importorskip("scipy")  # the direction-number table is read from SciPy's copy
pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dim", [1, 3, 40, 1111])
def test_unscrambled_points_equal_pytorch(torch, dim):
    def run(L):
        e = L.quasirandom.SobolEngine(dim)
        f64 = L.float64
        draws = [e.draw(5, dtype=f64), e.draw(3, dtype=f64), e.fast_forward(7).draw(4, dtype=f64),
                 e.reset().draw_base2(3, dtype=f64), e.draw()]
        return ([np.array(d.tolist()) for d in draws], np.array(e.sobolstate.tolist()),
                e.num_generated, repr(e), str(draws[-1].dtype).replace("hookgrad", "torch"))
    ours, theirs = run(hookgrad), run(torch)
    for a, b in zip(ours[0], theirs[0]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[2:] == theirs[2:]


def test_scrambled_points_are_seeded_balanced_nets():
    e = hookgrad.quasirandom.SobolEngine(5, scramble=True, seed=3)
    pts = np.array(e.draw_base2(5).tolist())
    assert repr(e) == "SobolEngine(dimension=5, scramble=True, seed=3)"
    assert pts.min() >= 0 and pts.max() < 1 and pts.shape == (32, 5)
    for d in range(5):  # one point in each of the 32 strata of every coordinate
        assert sorted((pts[:, d] * 32).astype(int).tolist()) == list(range(32))
    again = hookgrad.quasirandom.SobolEngine(5, scramble=True, seed=3).draw_base2(5)
    assert np.array_equal(np.array(again.tolist()), pts)
    other = hookgrad.quasirandom.SobolEngine(5, scramble=True, seed=4).draw_base2(5)
    assert not np.array_equal(np.array(other.tolist()), pts)


def test_errors_follow_pytorch(torch):
    def errors(L):
        out = []
        for call in (lambda: L.quasirandom.SobolEngine(0),
                     lambda: L.quasirandom.SobolEngine(21202),
                     lambda: L.quasirandom.SobolEngine(2).draw(3) and
                     L.quasirandom.SobolEngine(2).draw(3).shape and
                     (lambda e: (e.draw(3), e.draw_base2(2)))(L.quasirandom.SobolEngine(2))):
            try:
                call()
                out.append(None)
            except Exception as e:  # noqa: BLE001 - the type and text are compared
                out.append((type(e).__name__, str(e)))
        return out
    assert errors(hookgrad) == errors(torch)


def test_scrambled_points_equal_pytorch(torch):
    def draw(lib):
        seeded = lib.quasirandom.SobolEngine(3, scramble=True, seed=7).draw(4)
        lib.manual_seed(1)
        unseeded = lib.quasirandom.SobolEngine(2, scramble=True).draw(3)
        return seeded.tolist(), unseeded.tolist()

    assert draw(hookgrad) == draw(torch)
