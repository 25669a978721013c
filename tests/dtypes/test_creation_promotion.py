"""Creation and promotion corner cases of the complex and wide unsigned dtypes against
PyTorch (NumPy scalars, mixed lists, 0-dim tensors of another category, result_type)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.dtypes._compare import outcome


def _cases(lib):
    return [
        lambda: lib.zeros(2, dtype=complex),
        lambda: lib.tensor(np.complex64(1+2j)),
        lambda: lib.tensor([np.complex128(1j), 2]),
        lambda: lib.tensor([1j, True]),
        lambda: lib.tensor([[1, 2j], [3.5, 4]]),
        lambda: lib.as_tensor([1j], dtype=lib.complex128),
        lambda: lib.tensor(np.array([1, 2], dtype=np.uint32), dtype=lib.float32),
        lambda: lib.tensor([1, 2], dtype=lib.uint16) * lib.tensor(2.5),
        lambda: lib.tensor([1, 2], dtype=lib.uint16) * lib.tensor(2),
        lambda: lib.tensor([1, 2], dtype=lib.uint16) * True,
        lambda: lib.tensor([1, 2], dtype=lib.uint16) / lib.tensor([2, 2], dtype=lib.uint16),
        lambda: lib.tensor([3], dtype=lib.uint64) == 3,
        lambda: lib.full((2,), 3, dtype=lib.uint32),
        lambda: lib.ones(2, dtype=lib.complex64) * lib.ones(2, dtype=lib.float64),
        lambda: lib.ones(2, dtype=lib.float16) * lib.ones(2, dtype=lib.complex64),
        lambda: lib.tensor(2.0, dtype=lib.float64) * lib.ones(2, dtype=lib.complex64),
        lambda: lib.ones(2, dtype=lib.int32) * lib.tensor(1j, dtype=lib.complex128),
        lambda: lib.result_type(lib.ones(2), 1j),
        lambda: lib.result_type(lib.ones(2, dtype=lib.int64), 1j),
        lambda: lib.can_cast(lib.complex64, lib.float64),
        lambda: lib.can_cast(lib.float64, lib.complex64),
        lambda: lib.promote_types(lib.uint16, lib.float16),
        lambda: lib.ones(2, dtype=lib.bool) + 1j,
        lambda: lib.empty(0, dtype=lib.complex64) + 1,
        lambda: lib.zeros(2, 3, dtype=lib.cdouble).sum(1),
        lambda: lib.tensor([1+1j]).new_zeros(2),
        lambda: lib.tensor([1+1j]).new_tensor([2]),
        lambda: lib.ones(3, dtype=lib.uint16).new_ones(2),
        lambda: lib.tensor([1, 2], dtype=lib.uint16).to(lib.int64) + 1,
        lambda: lib.tensor([5], dtype=lib.uint32).float() / 2,
        lambda: lib.set_default_dtype(lib.float64) or lib.tensor([1j]).dtype,
        lambda: lib.full((1,), 2j).dtype,
        lambda: lib.set_default_dtype(lib.float32),
        lambda: lib.tensor([1+2j]).to(lib.int32),
        lambda: lib.tensor([1+2j]) @ lib.tensor([1.0]),
        lambda: lib.tensor([[1+2j, 3]]).T.contiguous(),
        lambda: lib.tensor([1+2j]).numpy().dtype.name,
    ]


@pytest.mark.parametrize("k", range(len(_cases(np))))
def test_case_matches_torch(torch, k):
    import hookgrad

    def run(lib):
        try:
            with warnings.catch_warnings():  # the complex-to-real cast warns once per process
                warnings.simplefilter("ignore", UserWarning)
                return repr(_cases(lib)[k]())
        finally:
            lib.set_default_dtype(lib.float32)

    assert outcome(hookgrad, run) == outcome(torch, run)


def _writes(lib):
    def real_gets_complex():
        x = lib.ones(2)
        x[0] = 1j
        return x

    def real_gets_real_complex():
        x = lib.ones(2)
        x[0] = 1 + 0j
        return x

    def complex_gets_numbers():
        z = lib.ones(2, dtype=lib.complex64)
        z[0] = 2.5
        z[1] = 3j
        z[lib.tensor([0])] = lib.tensor([1j])
        return z

    def copies_and_inplace():
        z = lib.ones(2, dtype=lib.complex64)
        z.copy_(lib.tensor([1.0, 2.0]))
        z.mul_(lib.tensor([2.0, 3.0]))
        z += 1j
        return z

    def real_copy_of_complex():
        x = lib.ones(2)
        x.copy_(lib.tensor([1 + 1j, 2]))
        return x

    def real_inplace_times_1j():
        return lib.ones(2).mul_(1j)

    def unsigned_writes():
        x = lib.ones(2, dtype=lib.uint16)
        x[0] = 7
        x *= 3
        return x

    return [real_gets_complex, real_gets_real_complex, complex_gets_numbers, copies_and_inplace,
            real_copy_of_complex, real_inplace_times_1j, unsigned_writes]


@pytest.mark.parametrize("k", range(7))
def test_writes_match_torch(torch, k):
    import hookgrad

    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return repr(_writes(lib)[k]())

    assert outcome(hookgrad, run)[0] == outcome(torch, run)[0]
    if outcome(torch, run)[0] == "ok":
        assert outcome(hookgrad, run) == outcome(torch, run)
