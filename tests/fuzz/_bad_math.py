"""Linear algebra on singular and non-square inputs, FFTs with bad sizes, dims and norms, sparse
constructors, ``out=`` tensors of the wrong dtype or kind, and indexing with bad indices, in
the bad-input corpus; a failing ``out=`` call or write leaves its target as PyTorch leaves it
(see `_bad_inputs` for the contract)."""

from __future__ import annotations

import numpy as np

from tests.fuzz._bad_inputs import _add, _add_stateful
from tests.fuzz._bad_ops import _x


def _sing(lib, n=3, batch=()):
    """A singular matrix (rank 1), float64."""
    v = lib.arange(1.0, n + 1, dtype=lib.float64)
    m = lib.outer(v, v)
    return m.expand(*batch, n, n).clone() if batch else m


# ---------------------------------------------------------------------------- linalg
_LA = {
    "inv_singular": lambda lib: lib.linalg.inv(_sing(lib)),
    "inv_singular_batch": lambda lib: lib.linalg.inv(_sing(lib, 2, (2,))),
    "inverse_singular": lambda lib: lib.inverse(_sing(lib)),
    "inv_int": lambda lib: lib.linalg.inv(lib.eye(2, dtype=lib.int64)),
    "inv_0d": lambda lib: lib.linalg.inv(lib.tensor(2.0)),
    "solve_singular": lambda lib: lib.linalg.solve(_sing(lib), lib.ones(3, dtype=lib.float64)),
    "solve_nonsquare": lambda lib: lib.linalg.solve(_x(lib, 2, 3), _x(lib, 2)),
    "solve_dtype": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2, dtype=lib.float64)),
    "solve_left_str": lambda lib: lib.linalg.solve(lib.eye(2), lib.ones(2), left="a"),
    "cholesky_nonsquare": lambda lib: lib.linalg.cholesky(_x(lib, 2, 3)),
    "cholesky_singular": lambda lib: lib.linalg.cholesky(_sing(lib)),
    "cholesky_ex_1d": lambda lib: lib.linalg.cholesky_ex(_x(lib, 3)),
    "det_nonsquare": lambda lib: lib.linalg.det(_x(lib, 2, 3)),
    "det_int": lambda lib: lib.linalg.det(lib.eye(2, dtype=lib.int64)),
    "slogdet_nonsquare": lambda lib: lib.linalg.slogdet(_x(lib, 3, 2)),
    "logdet_1d": lambda lib: lib.logdet(_x(lib, 3)),
    "eigh_nonsquare": lambda lib: lib.linalg.eigh(_x(lib, 2, 3)),
    "eigh_uplo": lambda lib: lib.linalg.eigh(lib.eye(2), UPLO="X"),
    "eigvalsh_1d": lambda lib: lib.linalg.eigvalsh(_x(lib, 3)),
    "svd_1d": lambda lib: lib.linalg.svd(_x(lib, 3)),
    "svdvals_0d": lambda lib: lib.linalg.svdvals(lib.tensor(1.0)),
    "svd_int": lambda lib: lib.linalg.svd(lib.eye(2, dtype=lib.int64)),
    "qr_1d": lambda lib: lib.linalg.qr(_x(lib, 3)),
    "qr_mode": lambda lib: lib.linalg.qr(lib.eye(2), mode="nope"),
    "lstsq_rows": lambda lib: lib.linalg.lstsq(_x(lib, 3, 2), _x(lib, 2, 1)),
    "lstsq_driver": lambda lib: lib.linalg.lstsq(_x(lib, 3, 2), _x(lib, 3, 1), driver="x"),
    "pinv_1d": lambda lib: lib.linalg.pinv(_x(lib, 3)),
    "matrix_rank_1d": lambda lib: lib.linalg.matrix_rank(_x(lib, 3)),
    "matrix_power_nonsquare": lambda lib: lib.linalg.matrix_power(_x(lib, 2, 3), 2),
    "matrix_power_singular_neg": lambda lib: lib.linalg.matrix_power(_sing(lib), -1),
    "matrix_power_float": lambda lib: lib.linalg.matrix_power(lib.eye(2), 1.5),
    "matrix_exp_nonsquare": lambda lib: lib.linalg.matrix_exp(_x(lib, 2, 3)),
    "matrix_norm_1d": lambda lib: lib.linalg.matrix_norm(_x(lib, 3)),
    "matrix_norm_ord": lambda lib: lib.linalg.matrix_norm(lib.eye(2), ord=3),
    "matrix_norm_dim_same": lambda lib: lib.linalg.matrix_norm(lib.eye(2), dim=(0, 0)),
    "vector_norm_int": lambda lib: lib.linalg.vector_norm(lib.ones(2, dtype=lib.int64)),
    "vector_norm_ord_str": lambda lib: lib.linalg.vector_norm(_x(lib, 2), ord="fro"),
    "vector_norm_dim_dup": lambda lib: lib.linalg.vector_norm(_x(lib, 2, 2), dim=(0, 0)),
    "norm_ord_nuc_1d": lambda lib: lib.linalg.norm(_x(lib, 3), ord="nuc"),
    "norm_3d_no_dim_ord": lambda lib: lib.linalg.norm(_x(lib, 2, 2, 2), ord=2),
    "cond_nonsquare_p1": lambda lib: lib.linalg.cond(_x(lib, 2, 3), p=1),
    "cond_1d": lambda lib: lib.linalg.cond(_x(lib, 3)),
    "cross_sizes": lambda lib: lib.linalg.cross(_x(lib, 3), _x(lib, 2, 4)),
    "vecdot_shape": lambda lib: lib.linalg.vecdot(_x(lib, 3), _x(lib, 4)),
    "multi_dot_one": lambda lib: lib.linalg.multi_dot([_x(lib, 2, 2)]),
    "multi_dot_3d": lambda lib: lib.linalg.multi_dot([_x(lib, 2, 2), _x(lib, 2, 2, 2)]),
    "multi_dot_shape": lambda lib: lib.linalg.multi_dot([_x(lib, 2, 3), _x(lib, 2, 3)]),
    "lu_factor_1d": lambda lib: lib.linalg.lu_factor(_x(lib, 3)),
    "lu_solve_shape": lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(lib.eye(2)),
                                                      _x(lib, 3, 1)),
    "tensorinv_ind": lambda lib: lib.linalg.tensorinv(lib.eye(4).reshape(4, 2, 2), ind=0),
    "tensorsolve_shape": lambda lib: lib.linalg.tensorsolve(lib.eye(4), _x(lib, 3)),
    "householder_product_shape": lambda lib: lib.linalg.householder_product(
        _x(lib, 2, 2), _x(lib, 3)),
    "solve_triangular_left": lambda lib: lib.linalg.solve_triangular(
        lib.eye(2), _x(lib, 2, 1), upper=True, left="a"),
    "solve_triangular_shape": lambda lib: lib.linalg.solve_triangular(
        lib.eye(2), _x(lib, 3, 1), upper=True),
    "diagonal_dims_same": lambda lib: lib.linalg.diagonal(lib.eye(2), dim1=0, dim2=0),
    "matrix_rank_tol_neg_str": lambda lib: lib.linalg.matrix_rank(lib.eye(2), tol="a"),
    "vander_0d": lambda lib: lib.linalg.vander(lib.tensor(1.0)),
    "trace_1d": lambda lib: lib.trace(_x(lib, 3)),
}
for _k, _f in _LA.items():
    _add(f"linalg2[{_k}]", _f)

# ---------------------------------------------------------------------------- fft
_FFTS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_FFT_BAD = {
    "n_zero": {"n": 0}, "n_neg": {"n": -2}, "n_float": {"n": 2.5}, "n_str": {"n": "a"},
    "dim_range": {"dim": 3}, "dim_neg_range": {"dim": -4}, "dim_float": {"dim": 0.5},
    "norm_bad": {"norm": "nope"}, "norm_int": {"norm": 1}, "unknown_kw": {"nope": 1},
}
for _fn in _FFTS:
    for _bk, _bkw in _FFT_BAD.items():
        _add(f"fft[{_fn},{_bk}]", lambda lib, fn=_fn, kw=_bkw: getattr(lib.fft, fn)(
            _x(lib, 2, 4), **kw))
_FFTN = ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn",
         "ihfftn")
_FFTN_BAD = {
    "s_len": {"s": (2, 2, 2), "dim": (0, 1)}, "s_zero": {"s": (0, 2)},
    "dim_dup": {"dim": (1, 1)}, "dim_range": {"dim": (0, 5)}, "norm_bad": {"norm": "x"},
    "s_float": {"s": (2.5, 2)}, "1d_input": "@1d",
}
for _fn in _FFTN:
    for _bk, _bkw in _FFTN_BAD.items():
        def _fftn(lib, fn=_fn, kw=_bkw):
            if kw == "@1d":
                return getattr(lib.fft, fn)(_x(lib, 4)) if fn.endswith("2") else \
                    getattr(lib.fft, fn)(_x(lib, 4), dim=(0, 1))
            return getattr(lib.fft, fn)(_x(lib, 2, 4), **kw)
        _add(f"fftn[{_fn},{_bk}]", _fftn)
_FFT_MORE = {
    "rfft_complex": lambda lib: lib.fft.rfft(_x(lib, 4).to(lib.complex64)),
    "ihfft_complex": lambda lib: lib.fft.ihfft(_x(lib, 4).to(lib.complex64)),
    "fft_bool": lambda lib: lib.fft.fft(lib.ones(4, dtype=lib.bool)),
    "fft_0d": lambda lib: lib.fft.fft(lib.tensor(1.0)),
    "irfft_n_one_empty": lambda lib: lib.fft.irfft(_x(lib, 0)),
    "fftshift_dim": lambda lib: lib.fft.fftshift(_x(lib, 4), dim=2),
    "ifftshift_dim_str": lambda lib: lib.fft.ifftshift(_x(lib, 4), dim="a"),
    "fftfreq_neg": lambda lib: lib.fft.fftfreq(-1),
    "fftfreq_str": lambda lib: lib.fft.fftfreq("a"),
    "rfftfreq_d_str": lambda lib: lib.fft.rfftfreq(4, d="a"),
    "fft_out_dtype": lambda lib: lib.fft.fft(_x(lib, 4), out=lib.zeros(4)),
    "stft_no_n_fft": lambda lib: lib.stft(_x(lib, 16)),
    "stft_no_return_complex": lambda lib: lib.stft(_x(lib, 16), 4),
    "stft_hop_zero": lambda lib: lib.stft(_x(lib, 16), 4, hop_length=0, return_complex=True),
    "stft_win_length": lambda lib: lib.stft(_x(lib, 16), 4, win_length=8,
                                            return_complex=True),
    "stft_3d": lambda lib: lib.stft(_x(lib, 1, 2, 16), 4, return_complex=True),
    "istft_real": lambda lib: lib.istft(_x(lib, 3, 5), 4),
}
for _k, _f in _FFT_MORE.items():
    _add(f"fft_more[{_k}]", _f)

# ---------------------------------------------------------------------------- sparse
_SPARSE = {
    "coo_indices_float": lambda lib: lib.sparse_coo_tensor(_x(lib, 2, 2), _x(lib, 2), (3, 3)),
    "coo_indices_1d": lambda lib: lib.sparse_coo_tensor(lib.tensor([0, 1]), _x(lib, 2),
                                                        (3, 3)),
    "coo_values_len": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, 1], [0, 1]]),
                                                        _x(lib, 3), (3, 3)),
    "coo_size_small": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, 5], [0, 1]]),
                                                        _x(lib, 2), (3, 3)),
    "coo_neg_index": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, -1], [0, 1]]),
                                                       _x(lib, 2), (3, 3)),
    "coo_size_len": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0, 1], [0, 1]]),
                                                      _x(lib, 2), (3,)),
    "coo_size_neg": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0], [0]]), _x(lib, 1),
                                                      (3, -1)),
    "coo_values_str": lambda lib: lib.sparse_coo_tensor(lib.tensor([[0], [0]]), "a", (3, 3)),
    "coo_check_invariants": lambda lib: lib.sparse_coo_tensor(
        lib.tensor([[0, 9], [0, 1]]), _x(lib, 2), (3, 3), check_invariants=True),
    "csr_crow_len": lambda lib: lib.sparse_csr_tensor(lib.tensor([0, 1]), lib.tensor([0]),
                                                      _x(lib, 1), (3, 3)),
    "csr_crow_decreasing": lambda lib: lib.sparse_csr_tensor(
        lib.tensor([0, 2, 1, 2]), lib.tensor([0, 1]), _x(lib, 2), (3, 3)),
    "csr_col_range": lambda lib: lib.sparse_csr_tensor(lib.tensor([0, 1, 1, 1]),
                                                       lib.tensor([7]), _x(lib, 1), (3, 3)),
    "csr_float_indices": lambda lib: lib.sparse_csr_tensor(
        lib.tensor([0.0, 1.0, 1.0, 1.0]), lib.tensor([0]), _x(lib, 1), (3, 3)),
    "csr_values_len": lambda lib: lib.sparse_csr_tensor(lib.tensor([0, 1, 1, 1]),
                                                        lib.tensor([0]), _x(lib, 2), (3, 3)),
    "to_sparse_dim": lambda lib: _x(lib, 2, 2).to_sparse(3),
    "to_sparse_csr_1d": lambda lib: _x(lib, 3).to_sparse_csr(),
    "sparse_mm_shape": lambda lib: lib.sparse.mm(_x(lib, 2, 3).to_sparse(), _x(lib, 2, 3)),
    "sparse_sum_dim": lambda lib: lib.sparse.sum(_x(lib, 2, 2).to_sparse(), dim=5),
    "coalesce_dense": lambda lib: _x(lib, 2).coalesce(),
    "indices_dense": lambda lib: _x(lib, 2).indices(),
    "values_dense": lambda lib: _x(lib, 2).values(),
    "crow_indices_coo": lambda lib: _x(lib, 2, 2).to_sparse().crow_indices(),
    "sparse_view": lambda lib: _x(lib, 2, 2).to_sparse().view(4),
}
for _k, _f in _SPARSE.items():
    _add(f"sparse[{_k}]", _f)


# ---------------------------------------------------------------------------- out=
def _observe_out(t):
    return [np.array(t.detach().numpy(), copy=True), tuple(t.shape), str(t.dtype)]


_OUT_TARGETS = {
    "int": lambda lib: lib.zeros(3, dtype=lib.int64),
    "bool": lambda lib: lib.zeros(3, dtype=lib.bool),
    "requires_grad": lambda lib: lib.zeros(3, requires_grad=True),
    "expanded": lambda lib: lib.zeros(1).expand(3),
    "overlap_input": "@input",
}
_OUT_OPS = {
    "add": lambda lib, a, o: lib.add(a, a, out=o),
    "mul": lambda lib, a, o: lib.mul(a, 2.5, out=o),
    "exp": lambda lib, a, o: lib.exp(a, out=o),
    "sin": lambda lib, a, o: lib.sin(a, out=o),
    "div": lambda lib, a, o: lib.div(a, 3.0, out=o),
    "sqrt": lambda lib, a, o: lib.sqrt(a.abs(), out=o),
    "mean": lambda lib, a, o: lib.mean(a.reshape(3, 1), 1, out=o),
    "cumsum": lambda lib, a, o: lib.cumsum(a, 0, out=o),
    "clamp": lambda lib, a, o: lib.clamp(a, -0.5, 0.5, out=o),
    "where": lambda lib, a, o: lib.where(a > 0, a, 0.5, out=o),
    "matmul": lambda lib, a, o: lib.matmul(a.reshape(3, 1), a.reshape(1, 1), out=o.reshape(
        3, 1) if o.is_contiguous() else o),
    "sigmoid": lambda lib, a, o: lib.sigmoid(a, out=o),
    "tanh": lambda lib, a, o: lib.tanh(a, out=o),
    "softmax": lambda lib, a, o: lib.softmax(a, 0, out=o),
    "lerp": lambda lib, a, o: lib.lerp(a, a + 1, 0.5, out=o),
}


def _make_out(tk):
    target = _OUT_TARGETS[tk]

    def make(lib):
        a = _x(lib, 3) * 0.7 + 0.1
        return (a, a if target == "@input" else target(lib))
    return make


for _ok, _of in _OUT_OPS.items():
    for _tk in _OUT_TARGETS:
        _add_stateful(f"out[{_ok},{_tk}]", _make_out(_tk),
                      lambda lib, pair, of=_of: of(lib, *pair),
                      lambda pair: _observe_out(pair[1]))
_OUT_MISC = {
    "not_tensor": lambda lib: lib.add(_x(lib, 2), 1, out=[0, 0]),
    "max_tuple_len": lambda lib: lib.max(_x(lib, 2, 2), 0, out=(lib.zeros(2),)),
    "max_tuple_dtype": lambda lib: lib.max(_x(lib, 2, 2), 0, out=(lib.zeros(2),
                                                                  lib.zeros(2))),
    "sort_out_int_values": lambda lib: lib.sort(_x(lib, 3), out=(
        lib.zeros(3, dtype=lib.int64), lib.zeros(3, dtype=lib.int64))),
    "topk_out_not_tuple": lambda lib: lib.topk(_x(lib, 3), 2, out=lib.zeros(2)),
    "cat_out_dtype": lambda lib: lib.cat([_x(lib, 2), _x(lib, 2)], out=lib.zeros(
        4, dtype=lib.int64)),
    "stack_out_str": lambda lib: lib.stack([_x(lib, 2)], out="a"),
    "arange_out_bool": lambda lib: lib.arange(3, out=lib.zeros(3, dtype=lib.bool)),
    "zeros_out_rg": lambda lib: lib.zeros(2, out=lib.ones(2, requires_grad=True)),
    "argmax_out_float": lambda lib: lib.argmax(_x(lib, 3), out=lib.zeros(())),
    "add_float_into_int": lambda lib: lib.add(lib.ones(2, dtype=lib.int64), 0.5,
                                              out=lib.zeros(2, dtype=lib.int64)),
}
for _k, _f in _OUT_MISC.items():
    _add(f"out_misc[{_k}]", _f)


# ---------------------------------------------------------------------------- indexing
def _observe_t(t):
    return [np.array(t.detach().numpy(), copy=True)]


_IDX_GET = {
    "tensor_int_range": lambda lib, t: t[lib.tensor([0, 4])],
    "tensor_neg_range": lambda lib, t: t[lib.tensor([-5])],
    "second_dim_range": lambda lib, t: t[:, lib.tensor([3])],
    "bool_mask_2d_shape": lambda lib, t: t[lib.ones(3, 3, dtype=lib.bool)],
    "bool_list_len": lambda lib, t: t[[True, False]],
    "uint8_mask_shape": lambda lib, t: t[lib.ones(2, dtype=lib.uint8)],
    "float_in_tuple": lambda lib, t: t[0, 1.5],
    "none_too_many": lambda lib, t: t[None, 0, 0, 0],
    "ellipsis_twice": lambda lib, t: t[..., 0, ...],
    "list_of_lists_ragged": lambda lib, t: t[[[0, 1], [0]]],
    "list_str": lambda lib, t: t[["a"]],
    "dict_index": lambda lib, t: t[{0: 1}],
    "set_index": lambda lib, t: t[{0, 1}],
    "complex_index": lambda lib, t: t[1j],
    "tensor_2d_float": lambda lib, t: t[_x(lib, 2, 2)],
    "slice_float_step": lambda lib, t: t[::1.5],
    "slice_str_start": lambda lib, t: t["a":],
    "slice_tensor_float": lambda lib, t: t[lib.tensor(1.5):],
    "int_tensor_2d_range": lambda lib, t: t[lib.tensor([[0, 9]])],
    "big_int": lambda lib, t: t[2 ** 63],
    "index_select_neg": lambda lib, t: t.index_select(0, lib.tensor([-1])),
    "narrow_range": lambda lib, t: t.narrow(0, 2, 5),
    "narrow_neg_len": lambda lib, t: t.narrow(0, 0, -1),
    "select_range": lambda lib, t: t.select(1, 5),
    "unbind_dim": lambda lib, t: t.unbind(3),
    "take_along_dim_shape": lambda lib, t: lib.take_along_dim(t, lib.tensor([[0, 1, 2, 3]]),
                                                              dim=0),
    "gather_neg": lambda lib, t: t.gather(1, lib.tensor([[-4]])),
    "index_put_idx_range": lambda lib, t: t.index_put((lib.tensor([5]),), lib.tensor(1.0)),
}
for _k, _f in _IDX_GET.items():
    _add(f"index_get[{_k}]", lambda lib, f=_f: f(lib, _x(lib, 3, 3)))

_IDX_SET = {
    "int_range": lambda lib, t: t.__setitem__(3, 1.0),
    "tensor_range": lambda lib, t: t.__setitem__(lib.tensor([0, 3]), 1.0),
    "mask_shape": lambda lib, t: t.__setitem__(lib.ones(2, dtype=lib.bool), 1.0),
    "value_shape": lambda lib, t: t.__setitem__(slice(None), _x(lib, 2, 3)),
    "value_broadcast_bad": lambda lib, t: t.__setitem__(0, _x(lib, 4)),
    "adv_value_shape": lambda lib, t: t.__setitem__((lib.tensor([0, 1]),), _x(lib, 3, 3)),
    "value_list_ragged": lambda lib, t: t.__setitem__(0, [[1.0], [1.0, 2.0]]),
    "value_none": lambda lib, t: t.__setitem__(0, None),
    "value_complex": lambda lib, t: t.__setitem__(0, 1j),
    "value_rg_into_leaf": "@leaf",
    "float_index": lambda lib, t: t.__setitem__(1.5, 0.0),
    "index_fill_range": lambda lib, t: t.index_fill_(0, lib.tensor([4]), 1.0),
    "index_copy_shape": lambda lib, t: t.index_copy_(0, lib.tensor([0]), _x(lib, 1, 2)),
    "index_add_dtype": lambda lib, t: t.index_add_(0, lib.tensor([0]), _x(lib, 1, 3,
                                                                           dtype="float64")),
    "masked_fill_shape": lambda lib, t: t.masked_fill_(lib.ones(2, dtype=lib.bool), 1.0),
    "masked_fill_float_mask": lambda lib, t: t.masked_fill_(_x(lib, 3, 3), 1.0),
    "masked_scatter_small": lambda lib, t: t.masked_scatter_(lib.ones(3, 3, dtype=lib.bool),
                                                             _x(lib, 2)),
    "scatter_index_rank": lambda lib, t: t.scatter_(0, lib.tensor([0]), 1.0),
    "scatter_reduce_bad": lambda lib, t: t.scatter_reduce_(0, lib.tensor([[0]]), _x(lib, 1, 1),
                                                           "nope"),
    "put_range": lambda lib, t: t.put_(lib.tensor([9]), lib.tensor([1.0])),
    "index_put_accumulate_str": lambda lib, t: t.index_put_((lib.tensor([0]),),
                                                            lib.tensor(1.0), accumulate="a"),
}


def _leaf_write(lib, t):
    leaf = lib.zeros(3, requires_grad=True)
    leaf[0] = 1.0


for _k, _f in _IDX_SET.items():
    _add_stateful(f"index_set[{_k}]", lambda lib: _x(lib, 3, 3),
                  _leaf_write if _f == "@leaf" else _f, _observe_t)
