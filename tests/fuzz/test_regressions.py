"""Minimised programs the differential fuzzer found, one per class, replayed against PyTorch.

Each was printed by ``test_eager_fuzz.py`` (or the triage loop in docs/fuzzing.md) and fixed;
the comment names the class. The format is `_program`'s.
"""

from __future__ import annotations

import pytest

import hookgrad
from tests.fuzz._program import diff, run

pytestmark = pytest.mark.oracle


def _p(steps, finish=None, saved_hooks=False):
    return {"seed": None, "steps": steps, "finish": finish, "saved_hooks": saved_hooks}


REGRESSIONS = {
    # layer_norm with parameters of another dtype than the input: PyTorch's RuntimeError
    "layer_norm_mixed_dtype": _p([
        ("leaf", "l2", (1,), "float64", True, 214941963),
        ("leaf", "l4", (1,), "float32", True, 698330076),
        ("op", "layer_norm", "t6", ["l2", "l4"], {}, "set_grad_enabled")]),
    # copy_ from a source that does not broadcast: RuntimeError, not NumPy's ValueError
    "copy_broadcast_error": _p([
        ("leaf", "l1", (2,), "float32", False, 939504457),
        ("op", "unsqueeze", "t7", ["l1"], {"dim": 0}, None),
        ("op", "expand", "t8", ["t7"], {"shape": [2, 1, 2]}, None),
        ("op", "copy_", "t9", ["l1", "t8"], {}, None)]),
    # cat of non-contiguous inputs is contiguous
    "cat_layout": _p([
        ("leaf", "l1", (2, 2, 2), "int64", True, 823002175),
        ("op", "index_select", "t2", ["l1"], {"dim": 2, "index": [1, 0]}, None),
        ("op", "diagonal", "t3", ["t2"], {}, None),
        ("op", "double", "t10", ["t3"], {}, None),
        ("op", "cat", "t13", ["t10", "t3"], {"dim": 0}, None)]),
    # a Python bool in a subtraction
    "sub_python_bool": _p([
        ("leaf", "l3", (3, 3), "float32", False, 270049507),
        ("leaf", "l12", (3, 1), "float32", False, 962149978),
        ("op", "sub", "t13", ["l3", "l12"], {"scalar": True}, None)]),
    # masked_select of a 0-d tensor, backward
    "masked_select_0d_backward": _p([
        ("leaf", "l2", (), "float32", True, 904031977),
        ("op", "masked_select", "t5", ["l2"], {}, None)],
        ("backward", ["t5"], None, True, False, False)),
    # .grad of a multi-output view whose base was modified: None, not the regeneration error
    "grad_of_stale_unbind_view": _p([
        ("leaf", "l1", (1, 3), "float32", True, 505964314),
        ("op", "sin", "t2", ["l1"], {}, None),
        ("op", "unbind", "t6", ["t2"], {"pick": 0, "size": 2}, None),
        ("op", "sigmoid_", "t7", ["t2"], {}, None)]),
    # cumsum of a non-contiguous input is contiguous
    "cumsum_layout": _p([
        ("leaf", "l2", (4, 2, 2), "float32", False, 429115608),
        ("op", "diagonal", "t8", ["l2"], {}, "set_grad_enabled"),
        ("op", "cumsum", "t13", ["t8"], {"dim": -2}, "set_grad_enabled")]),
    # a retained grad is row-major, whatever the incoming gradient's layout
    "retained_grad_layout": _p([
        ("leaf", "l1", (3, 4, 4), "float32", True, 659760644),
        ("op", "amax", "t4", ["l1"], {"dim": -3, "keepdim": True}, None),
        ("op", "transpose", "t13", ["t4"], {"d0": 2, "d1": -3}, None),
        ("retain", "t13")],
        ("backward", ["t13"], None, False, False, False)),
    # retained grad of a 0-d tensor stays 0-d
    "retained_grad_0d": _p([
        ("leaf", "l2", (), "float32", True, 757755127),
        ("op", "add", "t3", ["l2", "l2"], {"scalar": -1.5}, None),
        ("retain", "t3")],
        ("grad", ["t3"], ["l2"], False, False, False)),
    # in-place op whose input partially overlaps the target
    "inplace_partial_overlap": _p([
        ("leaf", "l1", (), "float64", False, 215626069),
        ("leaf", "l2", (), "float32", True, 241436496),
        ("op", "stack", "t3", ["l1", "l2"], {}, "no_grad"),
        ("op", "slice", "t6", ["t3"], {"dim": 0, "start": 0, "stop": 3, "step": 2}, None),
        ("op", "div_", "t8", ["t3", "t6"], {}, None)]),
    # cat checks 0-d inputs before the dim
    "cat_0d_before_dim": _p([
        ("leaf", "l1", (4, 2, 2), "float32", True, 116639742),
        ("op", "unbind", "t5", ["l1"], {"pick": 1, "size": 2}, None),
        ("leaf", "l6", (), "float32", False, 33737339),
        ("op", "cat", "t7", ["t5", "l6"], {"dim": 3}, None)]),
    # masked_fill_ on an expanded tensor: a deprecation warning, not an error
    "masked_fill_expanded": _p([
        ("leaf", "l1", (4,), "float32", False, 398768152),
        ("op", "expand", "t10", ["l1"], {"shape": [2, 4]}, None),
        ("op", "masked_fill_", "t12", ["t10"], {}, None)]),
    # ... and PyTorch's view error comes first when the expanded view was made in no_grad
    "masked_fill_expanded_nograd_view": _p([
        ("leaf", "l1", (), "float32", True, 153433521),
        ("op", "expand", "t3", ["l1"], {"shape": [2]}, "no_grad"),
        ("op", "masked_fill_", "t4", ["t3"], {}, None)]),
    # a view made without a graph: ops on it save only for edges that can take a gradient
    "no_graph_view_saves": _p([
        ("leaf", "l1", (3, 2, 3), "float32", True, 39233336),
        ("op", "unsqueeze", "t9", ["l1"], {"dim": 3}, "no_grad"),
        ("op", "square", "t10", ["t9"], {}, None),
        ("op", "exp", "t11", ["t9"], {}, None)], None, True),
    # ... and a joint formula (atan2) saves unconditionally
    "joint_formula_saves": _p([
        ("leaf", "l1", (3,), "float64", True, 53095622),
        ("op", "select", "t3", ["l1"], {"dim": 0, "index": 2}, "no_grad"),
        ("leaf", "l5", (), "float32", False, 71422293),
        ("op", "atan2", "t6", ["t3", "l5"], {}, None)], None, True),
    # layer norm saves bias, input, weight, mean, rstd whichever input needs a gradient
    "layer_norm_saves": _p([
        ("leaf", "l1", (4, 1), "float32", False, 314240857),
        ("leaf", "l4", (1,), "float32", True, 549892247),
        ("op", "layer_norm", "t5", ["l1", "l4"], {}, None)], None, True),
    # cumsum's backward (a reversed cumsum) has no negative strides
    "cumsum_backward_layout": _p([
        ("leaf", "l2", (1, 4), "float32", True, 129924564),
        ("hook", "l2", "h3", False),
        ("op", "cumsum", "t5", ["l2"], {"dim": -1}, None)],
        ("backward", ["t5"], None, False, False, False)),
    # x.mul_(x): `other` is saved as it is and fails its version check in backward
    "inplace_self_as_other": _p([
        ("leaf", "l2", (2, 1), "float32", True, 596710570),
        ("leaf", "l6", (1,), "float32", True, 637080759),
        ("op", "add", "t7", ["l2", "l6"], {}, None),
        ("op", "mul_", "t11", ["t7", "t7"], {}, None)],
        ("backward", ["t7"], None, False, False, False)),
    # node post hooks see gradients already cast to their inputs' dtypes
    "post_hook_sees_cast_grads": _p([
        ("leaf", "l2", (), "float64", False, 384723759),
        ("leaf", "l8", (), "float32", True, 413571753),
        ("op", "rsub", "t9", ["l2", "l8"], {}, None),
        ("node_hook", "t9", "h14", False)],
        ("grad", ["t9"], ["l8"], False, False, False)),
    # CopySlices gives no gradient to a base that had no edge (its post hooks see None)
    "copy_slices_no_edge": _p([
        ("leaf", "l3", (1, 1, 1), "float32", False, 710587274),
        ("leaf", "l5", (), "float32", True, 487870376),
        ("op", "setitem_slice", "t6", ["l3", "l5"], {"dim": 0, "start": 0, "stop": 0,
                                                      "step": 1}, None),
        ("node_hook", "t6", "h7", False)],
        ("backward", ["t6"], None, False, False, False)),
    # in-place on a stale view that requires grad only through its base: the leaf error
    "inplace_on_stale_graphless_view": _p([
        ("leaf", "l1", (3, 4), "float32", False, 331127190),
        ("leaf", "l2", (), "float32", True, 752218894),
        ("op", "flatten", "t4", ["l1"], {}, None),
        ("op", "expand", "t5", ["t4"], {"shape": [12]}, None),
        ("op", "setitem_slice", "t6", ["l1", "l2"], {"dim": 0, "start": 0, "stop": 2,
                                                      "step": 2}, None),
        ("op", "sigmoid_", "t9", ["t5"], {}, None)]),
    # clone of an expanded (overlapping) tensor is row-major
    "clone_of_expanded": _p([
        ("leaf", "l1", (3, 1, 4), "float32", True, 61859939),
        ("op", "expand", "t2", ["l1"], {"shape": [2, 3, 3, 4]}, "no_grad"),
        ("op", "clone", "t8", ["t2"], {}, None)]),
    # in-place on a constant with an operand that requires grad (issue class 1)
    "inplace_on_constant": _p([
        ("leaf", "w", (3,), "float32", True, 1),
        ("leaf", "v", (3,), "float32", False, 2),
        ("op", "mul_", "t1", ["v", "w"], {}, None),
        ("hook", "w", "hw", False)],
        ("backward", ["v"], None, False, False, False), True),
    # a view of a requires-grad leaf taken under no_grad (issue class 2)
    "view_under_no_grad": _p([
        ("leaf", "x", (3,), "float32", True, 3),
        ("op", "slice", "v", ["x"], {"dim": 0, "start": 0, "stop": 2, "step": 1}, "no_grad"),
        ("retain", "v"),
        ("op", "mul", "y", ["v", "x"], {"scalar": 3}, None)],
        ("backward", ["y"], None, False, False, False)),
    # cat's backward computes every input's gradient when any is needed (one TensorList)
    "cat_grads_together": _p([
        ("leaf", "l2", (4,), "float64", True, 886905909),
        ("op", "clone", "t3", ["l2"], {}, None),
        ("leaf", "l4", (4,), "float32", True, 447985042),
        ("op", "cat", "t5", ["t3", "l4"], {"dim": -1}, None),
        ("op", "index_mask", "t12", ["t5"],
         {"mask": [True, False, False, False, True, True, False, True]}, None),
        ("node_hook", "t5", "h15", False),
        ("op", "relu", "t17", ["t12"], {}, None)],
        ("grad", ["t17", "t3"], None, False, False, False)),
    # x[...] = v with a 0-d v that is x's own memory is a fill: no overlap error
    "fill_from_own_memory": _p([
        ("leaf", "l1", (), "float32", True, 810356568),
        ("op", "clone", "c1", ["l1"], {}, None),
        ("op", "view", "t2", ["c1"], {"shape": [1, 1, 1]}, None),
        ("op", "setitem_slice", "t6", ["t2", "c1"],
         {"dim": 2, "start": 0, "step": 2, "stop": 1}, None)],
        ("backward", ["t6"], None, False, False, False)),
    # reshape/flatten of a non-contiguous tensor that can be viewed: ReshapeAliasBackward0
    "reshape_alias_node": _p([
        ("leaf", "l2", (4, 3, 4), "float32", True, 202781553),
        ("op", "select", "t4", ["l2"], {"dim": 2, "index": -2}, None),
        ("op", "flatten", "t5", ["t4"], {}, None)],
        ("backward", ["t5"], None, False, False, False)),
    # sum of values holding inf and -inf is nan without a NumPy RuntimeWarning
    "sum_of_infinities_quiet": _p([
        ("leaf", "l1", (4,), "float32", True, 11783852),
        ("leaf", "l3", (), "int64", False, 8563882),
        ("op", "div", "t4", ["l1", "l3"], {}, None)],
        ("backward", ["t4", "l1"], None, False, False, False)),
    # --- result layouts (NOTE [Elementwise result layout], NOTE [Contiguous results]) ---
    # an elementwise op of an expanded (stride-0) operand, with type promotion: row-major
    "expanded_operand_promoted": _p([
        ("leaf", "l1", (4,), "float64", True, 735792648),
        ("leaf", "l2", (4,), "int64", False, 338745270),
        ("op", "expand", "t4", ["l2"], {"shape": [2, 4]}, None),
        ("op", "mul", "t9", ["l1", "t4"], {}, None)]),
    # expanded operand of another rank, under enable_grad inside no_grad
    "expanded_operand_rsub": _p([
        ("leaf", "l1", (1, 3, 4), "float32", True, 92707243),
        ("op", "expand", "t4", ["l1"], {"shape": [2, 1, 3, 4]}, None),
        ("leaf", "l6", (1, 1, 4), "float64", True, 69914839),
        ("op", "rsub", "t7", ["t4", "l6"], {}, "enable_grad_in_no_grad")]),
    "expanded_operand_same_rank": _p([
        ("leaf", "l1", (4, 2), "float32", True, 3342391),
        ("op", "clone", "t2", ["l1"], {}, None),
        ("op", "expand", "t4", ["t2"], {"shape": [2, 4, 2]}, None),
        ("leaf", "l5", (4, 2), "float64", True, 752779541),
        ("op", "mul", "t6", ["t4", "l5"], {}, None)]),
    # a unary op promoting an expanded integer tensor to float: row-major
    "expanded_int_cast": _p([
        ("leaf", "l2", (3, 3, 3), "int64", True, 717660442),
        ("op", "expand", "t4", ["l2"], {"shape": [2, 3, 3, 3]}, None),
        ("op", "tanh", "t7", ["t4"], {}, None)]),
    # .float() of an expanded tensor: row-major
    "expanded_to_copy": _p([
        ("leaf", "l1", (3, 3, 3), "float64", True, 946071274),
        ("op", "expand", "t5", ["l1"], {"shape": [2, 3, 3, 3]}, None),
        ("op", "float", "t11", ["t5"], {}, "set_grad_enabled")]),
    # an elementwise op follows its first input's dim order (TensorIterator), not NumPy's
    "transposed_first_operand": _p([
        ("leaf", "l1", (3, 4), "float32", True, 11),
        ("op", "transpose", "t1", ["l1"], {"d0": 0, "d1": 1}, None),
        ("leaf", "l2", (4, 3), "float32", True, 12),
        ("op", "add", "t2", ["t1", "l2"], {}, None),
        ("op", "mul", "t3", ["l2", "t1"], {}, None)]),
    # two gradients summed for one input follow the first one's layout (a permuted one here)
    "accumulated_grad_layout": _p([
        ("leaf", "l1", (4, 3), "float32", True, 551124723),
        ("leaf", "l2", (), "float32", True, 828931890),
        ("op", "rsub", "t3", ["l1", "l2"], {}, None),
        ("hook", "l1", "h7", False),
        ("op", "permute", "t8", ["l1"], {"dims": [1, 0]}, None)],
        ("backward", ["t3", "t8"], None, False, False, False)),
    # mean's backward is a fresh tensor (expand, then divide), sum's an expanded view
    "mean_backward_materialised": _p([
        ("leaf", "l2", (3, 3), "float32", True, 621965584),
        ("op", "mean", "t4", ["l2"], {"dim": -2, "keepdim": True}, None)],
        ("grad", ["t4"], ["l2"], False, False, False)),
    "mean_backward_hook": _p([
        ("leaf", "l5", (4, 2), "float32", True, 351184075),
        ("op", "diagonal", "t6", ["l5"], {}, None),
        ("hook", "t6", "h8", False),
        ("op", "mean", "t12", ["t6"], {"dim": -1, "keepdim": False}, None)],
        ("grad", ["l5", "t12"], ["l5"], False, False, False)),
    # reductions of permuted inputs are row-major
    "reduction_of_permuted": _p([
        ("leaf", "l2", (2, 2, 2), "float32", True, 905529654),
        ("op", "permute", "t8", ["l2"], {"dims": [1, 2, 0]}, None),
        ("op", "sum", "t11", ["t8"], {"dim": 0, "keepdim": False}, None)]),
    # layer_norm, masked_fill and softmax of non-contiguous inputs are row-major
    "layer_norm_of_permuted": _p([
        ("leaf", "l1", (4, 2, 2), "float32", False, 839598072),
        ("op", "permute", "t4", ["l1"], {"dims": [2, 0, 1]}, "set_grad_enabled"),
        ("op", "split", "t5", ["t4"], {"pick": 0, "size": 2}, None),
        ("op", "layer_norm", "t9", ["t4", "t5"], {}, None)]),
    "masked_fill_of_diagonal": _p([
        ("leaf", "l1", (2, 4, 2), "float64", True, 460579952),
        ("op", "diagonal", "t3", ["l1"], {}, None),
        ("op", "masked_fill", "t10", ["t3"], {}, None)]),
    "softmax_layout": _p([
        ("leaf", "l1", (3, 4), "float32", True, 5),
        ("op", "transpose", "t1", ["l1"], {"d0": 0, "d1": 1}, None),
        ("op", "softmax_raw", "t2", ["t1"], {"dim": 0}, None)]),
    # a view of a constant requires grad once an in-place op with a requires-grad operand
    # wrote its base: autograd.grad/backward accept it as an input (seed 5623)
    "view_of_constant_written_is_grad_input": _p([
        ("leaf", "l1", (1,), "float32", False, 900977675),
        ("op", "reshape", "t2", ["l1"], {"shape": [1, -1]}, None),
        ("leaf", "l5", (), "float32", True, 947244208),
        ("op", "sub_", "t6", ["l1", "l5"], {}, None)],
        ("grad", ["l5", "l1"], ["l1", "l5", "t2", "t6"], True, False, False)),
    # a first .grad kept from a read-only array (a broadcast 0-d gradient) takes the second
    # backward's accumulation (seed 6745)
    "second_backward_into_stolen_readonly_grad": _p([
        ("leaf", "l2", (), "float32", True, 754247306),
        ("op", "sum", "t7", ["l2"], {"dim": None, "keepdim": False}, None)],
        ("backward", ["t7"], None, True, False, True)),
    # a mean-reduced loss of empty inputs is nan without NumPy's RuntimeWarning (seed 6749)
    "mse_of_empty_masked_select": _p([
        ("leaf", "l1", (), "float32", True, 148193557),
        ("leaf", "l2", (), "float32", True, 564675840),
        ("op", "add", "t3", ["l1", "l2"], {}, None),
        ("op", "masked_fill_", "t5", ["t3"], {}, None),
        ("op", "masked_select", "t6", ["t5"], {}, None),
        ("op", "mse", "t7", ["t6", "t5"], {}, None)]),
    # CopySlices lays the base's gradient out like the base (a transposed where result) and
    # hands the in-place op's node a row-major slice (seed 5447)
    "copy_slices_gradient_layout": _p([
        ("leaf", "l2", (4, 1, 4), "float64", True, 658403773),
        ("op", "select", "t3", ["l2"], {"dim": 1, "index": -1}, None),
        ("op", "transpose", "t5", ["l2"], {"d0": 0, "d1": 2}, None),
        ("op", "where", "t7", ["t5", "t3"], {}, None),
        ("op", "alias", "t9", ["t7"], {}, None),
        ("hook", "t7", "h10", True),
        ("op", "div_", "t13", ["t9", "t7"], {}, None)],
        ("backward", ["t7", "t3"], ["t3", "t5", "t7", "t9"], False, False, False),
        saved_hooks=True),
    # layer_norm over one element: PyTorch's CPU formulas (x̂ as an fma, dx as a*dy*w + b*x + c)
    # leave rounding noise of about rstd * ulp where the exact gradient is 0 (seeds 2307, 6684)
    "layer_norm_one_element_input_grad": _p([
        ("leaf", "l1", (4,), "float32", True, 432094962),
        ("leaf", "l4", (1, 3, 4), "float32", True, 99025826),
        ("op", "reshape", "t5", ["l4"], {"shape": [6, 2, 1]}, None),
        ("op", "amax", "t6", ["l1"], {"dim": 0, "keepdim": True}, "set_grad_enabled"),
        ("op", "layer_norm", "t7", ["t5", "t6"], {}, None)],
        ("backward", ["l4", "t7"], ["l1", "t5", "t7"], False, False, True)),
    "layer_norm_one_element_weight_grad": _p([
        ("leaf", "l2", (1,), "float32", True, 383351614),
        ("leaf", "l3", (1,), "float32", True, 790533174),
        ("op", "layer_norm", "t4", ["l2", "l3"], {}, None),
        ("hook", "l3", "h7", True),
        ("op", "cumsum", "t12", ["t4"], {"dim": 0}, None)],
        ("backward", ["t12"], ["l1", "l3", "t12", "t4"], True, False, False)),
    # advanced-index assignment into an expanded tensor writes every alias and warns, as
    # PyTorch's deprecated index_put_ on expanded tensors (seed 7024)
    "setitem_list_into_expanded": _p([
        ("leaf", "l2", (2, 3, 1), "float32", False, 32459148),
        ("op", "expand", "t6", ["l2"], {"shape": [2, 3, 2]}, None),
        ("leaf", "l12", (3, 2), "float64", True, 691861518),
        ("op", "setitem_list", "t13", ["t6", "l12"], {"dim": 1, "idx": [2]}, None)]),
    # normalizations of inf/nan give nan without NumPy's RuntimeWarning (seed 7054)
    "layer_norm_of_inf": _p([
        ("leaf", "l1", (4, 1, 2), "float32", False, 350366059),
        ("leaf", "l2", (1, 1), "int64", True, 425716870),
        ("op", "div", "t3", ["l1", "l2"], {}, "no_grad"),
        ("op", "where", "t4", ["t3", "l2"], {}, None),
        ("leaf", "l6", (1,), "float64", True, 241858609),
        ("op", "layer_norm", "t7", ["t4", "l6"], {}, None)]),
    # a gradient summed over a broadcast leading dim of size 1 is row-major, as PyTorch's
    # sum_to (a reduction) allocates it (seed 8527)
    "sum_to_size_of_permuted_is_row_major": _p([
        ("leaf", "l1", (2, 3), "float32", True, 489158193),
        ("hook", "l1", "h3", False),
        ("op", "transpose", "t6", ["l1"], {"d0": 0, "d1": -1}, None),
        ("op", "detach", "t7", ["t6"], {}, None),
        ("op", "unsqueeze", "t9", ["t7"], {"dim": 0}, None),
        ("op", "maximum", "t10", ["t9", "t6"], {}, None)],
        ("backward", ["t10"], ["l1"], False, False, False)),
    # a value two backward formulas share (div's `other`) is saved unconditionally, also when
    # no input has a usable edge (a view made under no_grad), as PyTorch's unguarded saves
    # (seed 11716)
    "shared_saved_value_unguarded": _p([
        ("leaf", "l2", (1,), "float32", True, 660468237),
        ("op", "unbind", "t6", ["l2"], {"pick": 0, "size": 1}, "no_grad"),
        ("leaf", "l8", (), "int64", False, 525072047),
        ("op", "div", "t9", ["t6", "l8"], {}, None)], saved_hooks=True),
    # index_put_ into an expanded view of a leaf that requires grad: autograd's in-place
    # error comes before the deprecation warning, so nothing warns (seeds 10034, 12038)
    "setitem_list_into_expanded_leaf_view": _p([
        ("leaf", "l1", (), "float32", True, 569608474),
        ("leaf", "l2", (1,), "float64", True, 244992158),
        ("op", "expand", "t4", ["l2"], {"shape": [2, 2]}, None),
        ("op", "setitem_list", "t6", ["t4", "l1"], {"dim": 1, "idx": [-2, -1]}, None)]),
    # a slice is skipped (AliasBackward0) only for a start of 0 and a stop of at least the size
    # as written: x[..., -4:] of a size-4 dim records SliceBackward0 (new-family seed 707)
    "negative_full_slice_records_slice": _p([
        ("leaf", "l1", (3, 4), "float32", True, 5),
        ("op", "index_neg_slice", "t2", ["l1"], {"start": -4, "stop": None}, None),
        ("op", "index_neg_slice", "t3", ["l1"], {"start": -5, "stop": None}, None),
        ("op", "slice", "t4", ["l1"], {"dim": 1, "start": 0, "stop": 9, "step": 1}, None)],
        ("backward", ["t2", "t3"], None, False, False, False)),
    # Tensor.unfold is one view node, UnfoldBackward0, also of a 0-d tensor and with empty or
    # overlapping windows (new-family seeds 50, 86, 199)
    "unfold_node": _p([
        ("leaf", "l1", (3, 5), "float64", True, 7),
        ("op", "unfold", "t2", ["l1"], {"dim": 1, "size": 2, "step": 1}, None),
        ("op", "unfold", "t3", ["l1"], {"dim": 0, "size": 0, "step": 2}, None),
        ("leaf", "l4", (), "float32", True, 8),
        ("op", "unfold", "t5", ["l4"], {"dim": 0, "size": 1, "step": 1}, None),
        ("hook", "t2", "h6", True),
        ("op", "mul_", "t7", ["t2", "t2"], {"scalar": 2}, None)],
        ("backward", ["t7", "t5"], None, False, False, False), saved_hooks=True),
    # x[mask] = v with one boolean mask and a one-element v is PyTorch's masked_fill_ with
    # v.item(): v's dtype may differ (new-family seeds 46, 99, 526, 786)
    "setitem_mask_other_dtype": _p([
        ("leaf", "l1", (1, 4), "bool", False, 908144070),
        ("leaf", "l6", (), "float32", False, 235556416),
        ("op", "setitem_mask", "t7", ["l1", "l6"], {}, None),
        ("leaf", "l8", (3, 1, 3), "float32", True, 313689051),
        ("op", "sum", "t9", ["l8"], {"dim": 1, "keepdim": False}, None),
        ("leaf", "l10", (3, 3), "int32", False, 587238227),
        ("op", "setitem_mask", "t11", ["t9", "l10"], {}, None),
        ("leaf", "l12", (), "float64", True, 310459626),
        ("op", "setitem_mask", "t13", ["t9", "l12"], {}, None)],
        ("backward", ["t13"], None, False, False, False)),
    # ConvolutionBackward0 saves input and weight (in that order) whichever needs a gradient:
    # one joint formula in PyTorch (new-family seeds 518, 647, 697)
    "conv_saves_input_and_weight": _p([
        ("leaf", "l1", (2, 4, 4), "float32", True, 446503642),
        ("leaf", "l3", (3, 4, 1), "float32", False, 378200681),
        ("op", "conv1d", "t4", ["l1", "l3"], {"dilation": 2, "padding": 1, "stride": 2}, None),
        ("leaf", "l5", (1, 1, 3), "float64", False, 376628985),
        ("leaf", "l6", (2, 1, 2), "float64", True, 849298854),
        ("op", "conv1d", "t7", ["l5", "l6"], {"dilation": 2, "padding": 0, "stride": 1}, None)],
        ("backward", ["t4", "t7"], None, False, False, False), saved_hooks=True),
    # F.group_norm's Python-level check: one value per group and channel is PyTorch's
    # ValueError, before the kernel's divisibility RuntimeError (new-family seeds 115, 379)
    "group_norm_one_value_per_group": _p([
        ("leaf", "l2", (1, 1, 1), "float32", True, 117814340),
        ("op", "group_norm", "t4", ["l2"], {"groups": 1}, None),
        ("leaf", "l3", (1, 2), "float64", True, 124119837),
        ("op", "group_norm", "t5", ["l3"], {"groups": 2}, None)]),
    # Tensor.unfold checks its dim's range: IndexError (new-family seed 469)
    "unfold_dim_out_of_range": _p([
        ("leaf", "l1", (4,), "float32", True, 901796268),
        ("op", "unfold", "t7", ["l1"], {"dim": 1, "size": 2, "step": 1}, None),
        ("leaf", "l2", (), "float32", True, 9),
        ("op", "unfold", "t8", ["l2"], {"dim": -2, "size": 1, "step": 1}, None)]),
    # huber_loss' backward does not promote: mixed dtypes raise in backward, as PyTorch's
    # huber_loss_backward kernel (new-family seeds 449, 664)
    "huber_loss_mixed_dtype_backward": _p([
        ("leaf", "l2", (1,), "float32", True, 453232272),
        ("leaf", "l6", (1,), "float64", False, 257552991),
        ("op", "huber_loss", "t7", ["l2", "l6"], {"reduction": "sum"}, None)],
        ("backward", ["t7"], None, False, False, False)),
    # activation backward kernels lay their result out as PyTorch's TensorIterator order:
    # (self, grad) for threshold/leaky_relu, (grad, self) for gelu/silu/hard*/elu/softplus;
    # logsigmoid's forward is row-major (new-family seed 88)
    "activation_backward_layout": _p([
        ("leaf", "l1", (3, 3, 3), "float32", True, 579667101),
        ("op", "permute", "t2", ["l1"], {"dims": [2, 0, 1]}, None),
        ("op", "relu", "t3", ["t2"], {}, None),
        ("op", "leaky_relu", "t4", ["t2"], {"slope": 0.2}, None),
        ("op", "gelu", "t5", ["t2"], {}, None),
        ("op", "logsigmoid", "t6", ["t2"], {}, None),
        ("op", "clone", "t7", ["l1"], {}, None),
        ("op", "hardswish_inplace", "t8", ["t7"], {}, None),
        ("op", "permute", "t9", ["t8"], {"dims": [2, 0, 1]}, None),
        ("op", "silu", "t10", ["t2"], {}, None),
        ("op", "elu", "t11", ["t2"], {}, None)],
        ("grad", ["t3", "t9", "t4", "t5", "t10", "t11"], ["l1", "t2"], False, False, False)),
    # binary_cross_entropy_with_logits returns the target's dtype (PyTorch builds the loss in
    # place on 1 - target) (seed 22266)
    "bce_with_logits_target_dtype": _p([
        ("leaf", "l2", (2, 1), "float64", True, 91511115),
        ("leaf", "l10", (2, 1), "float32", True, 424923084),
        ("op", "bce_logits", "t11", ["l2", "l10"], {"reduction": "sum"}, None),
        ("op", "bce_logits", "t12", ["l10", "l2"], {"reduction": "none"}, None)],
        ("backward", ["t11", "t12"], None, False, False, False)),
    # kernels without a Bool instance raise NotImplementedError: remainder, fmod, pow, the
    # matrix products (seeds 20455, nn-table 153)
    "bool_kernels_not_implemented": _p([
        ("leaf", "l1", (2,), "bool", False, 58655964),
        ("leaf", "l4", (2,), "int32", True, 815343367),
        ("op", "logical_and", "t5", ["l1", "l4"], {}, None),
        ("op", "remainder", "t7", ["t5", "l1"], {}, None),
        ("op", "pow", "t8", ["t5", "l1"], {"exp": None}, None),
        ("op", "matmul", "t9", ["t5", "l1"], {}, None),
        ("op", "floor_divide", "t10", ["t5", "l1"], {}, None)]),
    # max_pool1d without a gradient to compute returns a fresh tensor (PyTorch's
    # max_pool1d_impl), not a view a later in-place write would have to rebase (nn seed 6)
    "max_pool1d_no_grad_not_a_view": _p([
        ("leaf", "l1", (2, 4), "float32", False, 369067239),
        ("op", "max_pool1d", "t2", ["l1"],
         {"ceil_mode": True, "kernel_size": 3, "padding": 0, "stride": None}, "no_grad"),
        ("leaf", "l3", (1, 1), "float32", True, 849865630),
        ("op", "setitem_mask", "t4", ["t2", "l3"], {}, None)],
        ("backward", ["t4"], None, False, False, False)),
    # batch/instance norm of an empty input: no NumPy "Mean of empty slice" warning (nn seed
    # 312); binary_cross_entropy does not promote: mixed dtypes raise (nn seed 292)
    "empty_norm_quiet_and_bce_mixed_dtype": _p([
        ("leaf", "l1", (2, 4, 0), "float32", True, 552021704),
        ("op", "instance_norm", "t6", ["l1"], {}, None),
        ("leaf", "l4", (1, 2, 1), "float64", True, 846578262),
        ("leaf", "l8", (1, 2, 1), "float32", True, 558112948),
        ("op", "bce", "t9", ["l4", "l8"], {"reduction": "mean"}, "no_grad")]),
    # fuzz seed 50061: batch/instance norm of an empty input is a clone (nothing saved)
    "instance_norm_empty_saves_nothing": _p([
        ("leaf", "l1", (0, 1, 2), "float32", True, 444415977),
        ("op", "instance_norm", "t3", ["l1"], {}, None)], saved_hooks=True),
    # fuzz seed 50468: max pooling with a 1x1 window is a fresh tensor, not a view of the input
    "max_pool_unit_window_is_not_a_view": _p([
        ("leaf", "l6", (1, 1, 2), "float32", False, 348669623),
        ("op", "max_pool2d", "t9", ["l6"],
         {"ceil_mode": False, "kernel_size": 1, "padding": 0, "stride": None}, None),
        ("op", "silu_inplace", "t11", ["t9"], {}, None)]),
    # fuzz seed 50777: an inf in one adaptive-pooling window leaves the other windows finite
    "adaptive_avg_pool_inf_stays_in_its_window": _p([
        ("leaf", "l1", (1, 1, 3), "float32", True, 295833862),
        ("op", "split", "t4", ["l1"], {"pick": 0, "size": 1}, None),
        ("op", "sub", "t7", ["l1", "t4"], {}, "no_grad"),
        ("op", "div", "t9", ["l1", "t7"], {}, None),
        ("op", "adaptive_avg_pool2d", "t10", ["t9"], {"size": [1, 2]}, None)]),
    # fuzz seeds 30045/32969/34070: a pooling gradient computed with create_graph=True has a
    # graph when the input requires grad (PyTorch's backward ops take `self`, zeros_like(self))
    "max_pool1d_create_graph_twice": _p([
        ("leaf", "l3", (1, 2), "float32", True, 202286254),
        ("op", "max_pool1d", "t5", ["l3"],
         {"ceil_mode": True, "kernel_size": 2, "padding": 1, "stride": 2}, None)],
        ("backward", ["t5", "l3"], None, True, True, True)),
    "max_pool2d_grad_create_graph": _p([
        ("leaf", "l3", (4, 3, 3), "float64", True, 124968193),
        ("op", "max_pool2d", "t7", ["l3"],
         {"ceil_mode": False, "kernel_size": 3, "padding": 0, "stride": 1}, None)],
        ("grad", ["t7", "l3"], ["l3", "t7"], True, True, False)),
    "avg_pool1d_create_graph": _p([
        ("leaf", "l1", (4, 3), "float32", True, 488396768),
        ("op", "avg_pool1d", "t4", ["l1"],
         {"ceil_mode": False, "count_include_pad": False, "kernel_size": 1, "padding": 0,
          "stride": 2}, None)],
        ("backward", ["t4"], None, True, True, False)),
    # fuzz seed 30172: batch norm of a constant batch: ATen's fma(x, invstd, -mean*invstd)
    # leaves the product's rounding error where a subtraction first gives exact zeros
    "batch_norm_constant_batch": _p([
        ("leaf", "l1", (4, 4), "float32", True, 164140450),
        ("op", "index_select", "t2", ["l1"], {"dim": 0, "index": [3, 3]}, None),
        ("op", "batch_norm", "t3", ["t2"], {"affine": False, "training": True}, None)]),
    # fuzz seed 61385: batch norm of a non-contiguous input is row-major
    "batch_norm_layout": _p([
        ("leaf", "l1", (2, 4), "float32", False, 606776534),
        ("op", "unfold", "t2", ["l1"], {"dim": 0, "size": 2, "step": 1}, "set_grad_enabled"),
        ("op", "batch_norm", "t3", ["t2"], {"affine": False, "training": False}, None)]),
    # fuzz seed 60309: rms_norm is ATen's composite ending in contiguous()
    "rms_norm_layout": _p([
        ("leaf", "l2", (4, 3, 2), "float32", False, 679114801),
        ("op", "diagonal", "t4", ["l2"], {}, "no_grad"),
        ("op", "rms_norm", "t12", ["t4"], {"eps": 0.1}, None)]),
    # fuzz seeds 60634/61008: unreduced losses are laid out by their TensorIterator
    "bce_unreduced_layout": _p([
        ("leaf", "l1", (2, 3), "float64", False, 143887138),
        ("op", "index_bool_scalar", "t3", ["l1"], {"b": True}, None),
        ("op", "movedim", "t5", ["t3"], {"dst": 1, "src": 2}, "no_grad"),
        ("leaf", "l6", (1, 3, 2), "float64", True, 616927178),
        ("op", "bce", "t7", ["t5", "l6"], {"reduction": "none"}, "no_grad")]),
    "huber_unreduced_layout": _p([
        ("leaf", "l1", (3, 1, 3), "float32", True, 653058907),
        ("op", "permute", "t9", ["l1"], {"dims": [2, 1, 0]}, "no_grad"),
        ("leaf", "l12", (3, 1, 3), "float32", False, 284755993),
        ("op", "huber_loss", "t13", ["t9", "l12"], {"reduction": "none"}, None)]),
    # fuzz seed 62404: avg pooling's backward with padding is a fresh row-major gradient
    "avg_pool_padded_backward_layout": _p([
        ("leaf", "l1", (3, 2, 4), "float64", True, 116411983),
        ("op", "avg_pool1d", "t5", ["l1"],
         {"ceil_mode": False, "count_include_pad": True, "kernel_size": 2, "padding": 1,
          "stride": 1}, None),
        ("op", "sigmoid_", "t6", ["t5"], {}, "enable_grad_in_no_grad"),
        ("op", "clamp_", "t9", ["t6"], {}, None)],
        ("grad", ["t9"], ["l1", "t5"], True, False, False), saved_hooks=True),
    # fuzz seed 62294: mm's gradient of a column-major operand (linear's weight.t()) is
    # column-major, as ATen's mm_mat2_backward computes it: (grad.T @ mat1).T
    "mm_gradient_of_transposed_operand": _p([
        ("leaf", "l1", (4,), "float32", True, 730681599),
        ("leaf", "l2", (), "float32", True, 185238387),
        ("op", "index_add", "t3", ["l1", "l2"], {"dim": 0, "index": [1]}, None),
        ("leaf", "l5", (1,), "int64", False, 715727573),
        ("op", "stack", "t6", ["t3", "l5"], {}, None),
        ("hook", "t6", "h7", False),
        ("op", "silu_inplace", "t8", ["t6"], {}, None),
        ("op", "linear", "t9", ["t3", "t8"], {}, None)],
        ("grad", ["t9"], ["l1", "l2", "t3"], True, False, False)),
    # fuzz seed 63696: CopySlices computes no gradient the task does not need (a node post-hook
    # sees None for the base when only the written value's input is asked for)
    "copy_slices_unneeded_base_gradient": _p([
        ("leaf", "l1", (3,), "float64", True, 154686903),
        ("leaf", "l2", (), "float32", True, 605095744),
        ("op", "relu_inplace", "t3", ["l1"], {}, "no_grad"),
        ("leaf", "l4", (1, 4), "float32", True, 362060464),
        ("op", "pow", "t5", ["t3", "l1"], {"exp": None}, None),
        ("op", "div", "t6", ["l2", "l4"], {"scalar": True}, None),
        ("op", "setitem_slice", "t7", ["t5", "t6"],
         {"dim": 0, "start": 1, "step": 2, "stop": 3}, None),
        ("node_hook", "t7", "h8", False)],
        ("grad", ["l2", "t7"], ["l2"], False, False, False)),
    # fuzz seed 64319: x[mask] = x with a 0-d mask is an int64 index (not masked_fill_): the
    # value overlapping the written tensor raises
    "setitem_0d_mask_overlapping_value": _p([
        ("leaf", "l1", (), "int64", False, 25442126),
        ("op", "masked_fill_", "t3", ["l1"], {}, None),
        ("op", "setitem_mask", "t4", ["t3", "l1"], {}, "set_grad_enabled")]),
    # fuzz seeds 62961/64408: group norm over one- or two-element groups, where the gradient is
    # rounding noise: ATen's fused multiply-adds (forward and backward) decide it
    "group_norm_single_element_groups": _p([
        ("leaf", "l1", (2, 3), "float32", True, 278464226),
        ("op", "group_norm", "t6", ["l1"], {"groups": 3}, None),
        ("op", "permute", "t7", ["t6"], {"dims": [1, 0]}, None)],
        ("backward", ["t7"], ["l1"], False, False, False)),
    # fuzz seed 82592: max_pool1d without a gradient is its own kernel's row-major result,
    # whatever layout the 2-d pooling of a channels-last-like input keeps
    "max_pool1d_no_grad_layout": _p([
        ("leaf", "l1", (4, 4, 2), "float32", False, 731780428),
        ("op", "mT", "t5", ["l1"], {}, None),
        ("op", "max_pool1d", "t7", ["t5"],
         {"ceil_mode": False, "kernel_size": 1, "padding": 0, "stride": None},
         "enable_grad_in_no_grad")]),
    # fuzz seed 84863: tanh's backward kernel takes the incoming gradient's layout
    "tanh_backward_layout": _p([
        ("leaf", "l1", (1, 3, 4), "float32", True, 803639498),
        ("op", "tanh", "t2", ["l1"], {}, None),
        ("hook", "l1", "h3", False),
        ("op", "transpose", "t7", ["t2"], {"d0": -1, "d1": 1}, None)],
        ("backward", ["t7"], None, False, True, False)),
    # --- issue 27, round 3 (docs/fuzzing.md): classes of fresh seeds 60,000-104,999 ---
    # fuzz seed 61535: under create_graph an eval batch norm's input gradient has a graph when
    # the input requires grad (PyTorch's native_batch_norm_backward reads input and weight:
    # NOTE [Double-backward reads])
    'bn_eval_grad_graph_under_create_graph': _p([
        ('leaf', 'l5', (1, 1), 'float32', True, 51670509),
        ('op', 'batch_norm', 't12', ['l5'], {'training': False, 'affine': True}, None)],
        ('grad', ['t10', 't12'], ['l1', 'l5', 't10', 't8'], False, True, False)),
    # fuzz seed 82705: nll_loss's input gradient under create_graph has a graph
    # (nll_loss_backward's `self: zeros_like(grad)`)
    'nll_grad_graph_under_create_graph': _p([
        ('leaf', 'l1', (2, 4), 'float32', True, 582870036),
        ('op', 'nll_loss', 't5', ['l1'],
         {'target': [3, 2], 'reduction': 'none', 'label_smoothing': 0.0}, None),
        ('node_hook', 't5', 'h10', False)],
        ('backward', ['t5', 'l2'], None, False, True, False)),
    # fuzz seed 83726: group norm's mean and rstd are differentiable outputs: a node pre-hook
    # sees three gradients
    'group_norm_prehook_sees_three_grads': _p([
        ('leaf', 'l1', (4, 4), 'float32', True, 419425053),
        ('op', 'group_norm', 't3', ['l1'], {'groups': 2}, None),
        ('node_hook', 't3', 'h13', True)],
        ('backward', ['t3', 't11'], ['l1', 'l7', 't11'], False, False, True)),
    # fuzz seed 91689: nll_loss of an (N, C, d) input runs nll_loss2d on (N, C, 1, d), as
    # ATen's nll_loss_nd
    'nll_3d_input_reshape': _p([
        ('leaf', 'l2', (3, 1, 4), 'float32', True, 82503619),
        ('op', 'cross_entropy', 't4', ['l2'],
         {'target': [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], 'reduction': 'mean',
          'label_smoothing': 0.0}, None),
        ('node_hook', 't4', 'h7', False)],
        ('backward', ['t9', 't4'], ['l2', 'l8', 't4'], True, False, False)),
    # fuzz seed 90304: a nan incoming gradient leaves nll_loss's ignored and non-target entries 0
    'nll_nan_grad_ignored_targets': _p([
        ('leaf', 'l3', (1,), 'float32', True, 76318052),
        ('leaf', 'l5', (1,), 'float32', True, 209332361),
        ('op', 'add', 't6', ['l3', 'l5'], {}, None),
        ('op', 'nll_loss', 't11', ['t6'],
         {'target': -100, 'reduction': 'mean', 'label_smoothing': 0.0}, None),
        ('op', 'sigmoid_', 't14', ['t11'], {}, None)],
        ('backward', ['t11', 't13'], ['l2', 'l3', 'l5', 't11', 't12', 't13', 't14'], False, False,
         False)),
    # fuzz seed 90977: BCE of a nan input raises (ATen checks 0 <= x <= 1)
    'bce_nan_input_raises': _p([
        ('leaf', 'l1', (1, 3), 'float64', True, 814912265),
        ('leaf', 'l2', (1, 3), 'float32', True, 557193526),
        ('op', 'pow', 't3', ['l1', 'l2'], {'exp': 0.5}, None),
        ('leaf', 'l9', (1, 3), 'float64', True, 544663614),
        ('op', 'bce', 't10', ['t3', 'l9'], {'reduction': 'sum'}, None)]),
    # fuzz seed 94627: threshold_ writes an expanded tensor without the overlap error
    'threshold_inplace_on_expanded': _p([
        ('leaf', 'l1', (4, 1, 1), 'float32', False, 131543102),
        ('op', 'expand', 't2', ['l1'], {'shape': [2, 4, 3, 3]}, None),
        ('op', 'threshold_inplace', 't14', ['t2'], {}, None)]),
    # fuzz seed 91595: retain_grad on a no-grad view written since is a no-op (C++ is_leaf)
    'retain_grad_no_grad_view_written': _p([
        ('leaf', 'l1', (1, 1), 'float32', False, 16137800),
        ('leaf', 'l2', (1, 4), 'float64', True, 516358972),
        ('op', 'sub', 't3', ['l1', 'l2'], {}, None),
        ('op', 'view', 't4', ['t3'], {'shape': [2, -1]}, None),
        ('op', 'view_write', 't9', ['t4'], {'dim': 1, 'index': -2, 'value': 0.5},
         'set_grad_enabled'),
        ('retain', 't9')]),
    # fuzz seed 81119: after a refused grad_fn regeneration a second register_hook is silent
    'register_hook_after_refused_grad_fn': _p([
        ('leaf', 'l1', (3, 1, 3), 'float64', True, 944446015),
        ('op', 'view_write', 't3', ['l1'], {'dim': 1, 'index': -1, 'value': 2}, 'no_grad'),
        ('retain', 't3')]),
    # fuzz seed 91078: unfold of size 0 keeps its gradient's graph under create_graph
    'unfold_size0_grad_graph': _p([
        ('leaf', 'l1', (2, 4), 'float32', True, 983043974),
        ('op', 'unfold', 't2', ['l1'], {'dim': -2, 'size': 0, 'step': 1}, None),
        ('op', 'square', 't3', ['t2'], {}, None)],
        ('backward', ['t3', 'l8'], ['l1', 'l8', 't10', 't3', 't6', 't7'], False, True, False)),
    # an integral dtype= for a reduction or scan of a tensor that requires grad: "Autograd not
    # support dtype"
    'sum_dtype_int_of_requires_grad': _p([
        ('leaf', 'l1', (4, 1, 1), 'float32', True, 869025247),
        ('op', 'dtype_kw', 't5', ['l1'], {'fn': 'cumsum', 'dtype': 'int64'}, None)]),
    # addcdiv of two integral operands raises, whatever the input promotes to
    'addcdiv_integer_operands': _p([
        ('leaf', 'l2', (3, 4), 'int32', False, 729496560),
        ('leaf', 'l3', (4,), 'float32', True, 89286747),
        ('op', 'addcdiv', 't4', ['l3', 'l2'], {'value': 0.5}, None)]),
    # topk's indices are a fresh row-major tensor
    'topk_indices_row_major': _p([
        ('leaf', 'l2', (4, 3), 'float32', True, 338203086),
        ('op', 'topk', 't5', ['l2'], {'k': 1, 'dim': -1, 'largest': True, 'pick': 1}, None)]),
    # topk of a bool tensor raises
    'topk_bool_raises': _p([
        ('leaf', 'l2', (3, 4), 'bool', False, 2630753),
        ('op', 'topk', 't12', ['l2'], {'k': 3, 'dim': -2, 'largest': True, 'pick': 0}, None)]),
    # nonzero's result is the transpose of a (ndim, n) buffer: strides (1, n)
    'nonzero_column_layout': _p([
        ('leaf', 'l2', (3, 4), 'int32', False, 729496560),
        ('op', 'nonzero', 't3', ['l2'], {'tup': False}, None)]),
    # unique's inverse of a 0-d input is 0-d
    'unique_inverse_0d': _p([
        ('leaf', 'l2', (), 'float32', True, 813189292),
        ('op', 'unique', 't3', ['l2'], {'sorted': True, 'inverse': True, 'dim': None}, None)]),
    # unique of a tensor that requires grad records Unique2Backward0 (its backward raises)
    'unique_records_node': _p([
        ('leaf', 'l1', (), 'float32', True, 987276843),
        ('op', 'unique', 't3', ['l1'], {'sorted': True, 'inverse': True, 'dim': None}, None)]),
    # unique(dim=d) lays the unique dim outermost
    'unique_dim_layout': _p([
        ('leaf', 'l2', (4, 1, 2), 'float32', True, 821228418),
        ('op', 'unique', 't4', ['l2'], {'sorted': True, 'inverse': False, 'dim': 2}, None)]),
    # kthvalue, median, cummax/cummin, logcumsumexp, rot90, masked_scatter,
    # index_copy/index_fill record their own nodes
    'kthvalue_node': _p([
        ('leaf', 'l1', (4, 1, 1), 'float32', True, 869025247),
        ('op', 'kthvalue', 't5', ['l1'], {'dim': -2, 'k': 1, 'keepdim': True, 'pick': 0}, None)]),
    # median of the whole tensor records MedianBackward0
    'median_node': _p([
        ('leaf', 'l2', (), 'float32', True, 813189292),
        ('op', 'median', 't3', ['l2'], {}, None)]),
    # cummax records CummaxBackward0 (saves self, indices)
    'cummax_node': _p([
        ('leaf', 'l2', (4, 3), 'float32', True, 338203086),
        ('op', 'cummax', 't5', ['l2'], {'dim': 0, 'pick': 0}, None)]),
    # logcumsumexp records LogcumsumexpBackward0
    'logcumsumexp_node': _p([
        ('leaf', 'l1', (4, 1, 1), 'float32', True, 869025247),
        ('op', 'logcumsumexp', 't5', ['l1'], {'dim': -2}, None)]),
    # rot90 records Rot90Backward0
    'rot90_node': _p([
        ('leaf', 'l1', (4, 1, 1), 'float32', True, 869025247),
        ('op', 'rot90', 't6', ['l1'], {'k': -1}, None)]),
    # masked_scatter records MaskedScatterBackward0
    'masked_scatter_node': _p([
        ('leaf', 'l1', (4, 1, 1), 'float32', True, 869025247),
        ('leaf', 'l5', (1,), 'float32', True, 750364672),
        ('op', 'masked_scatter', 't6', ['l1', 'l5'], {}, None)]),
    # masked_scatter with a source of another dtype raises
    'masked_scatter_dtype_check': _p([
        ('leaf', 'l1', (0, 2), 'float64', False, 649415749),
        ('leaf', 'l5', (), 'float32', True, 8284309),
        ('op', 'masked_scatter', 't6', ['l1', 'l5'], {}, None)]),
    # index_copy records IndexCopyBackward0 and saves index and source
    'index_copy_node': _p([
        ('leaf', 'l1', (4, 1, 1), 'float32', True, 869025247),
        ('leaf', 'l5', (1,), 'float32', True, 750364672),
        ('op', 'index_copy', 't6', ['l1', 'l5'],
         {'dim': 1, 'index': [0], 'fill': False, 'inplace': False}, None)]),
    # out= with an argument that requires grad raises PyTorch's RuntimeError
    'out_variant_requires_grad': _p([
        ('leaf', 'l1', (4, 1, 1), 'float32', True, 869025247),
        ('leaf', 'l5', (1,), 'float32', True, 750364672),
        ('op', 'out_variant', 't6', ['l1', 'l5'], {'kind': 1, 'dtype': 'float64'}, None)]),
    # out= resizes an empty out tensor and casts like PyTorch
    'out_variant_resizes': _p([
        ('leaf', 'l2', (3, 4), 'int32', False, 729496560),
        ('leaf', 'l3', (4,), 'float32', True, 89286747),
        ('op', 'out_variant', 't4', ['l2', 'l3'], {'kind': 2, 'dtype': None}, None)]),
    # cummax of a non-contiguous input is row-major
    'cummax_row_major': _p([
        ('leaf', 'l2', (2, 3, 2), 'float32', True, 236857343),
        ('op', 'transpose', 't7', ['l2'], {'d0': -3, 'd1': 2}, None),
        ('op', 'cummax', 't13', ['t7'], {'dim': -3, 'pick': 0}, None)]),
    # tril_/triu_ record TrilBackward0/TriuBackward0 in place (not a copy)
    'tril_inplace_node': _p([
        ('leaf', 'l2', (1, 1), 'float32', False, 228709886),
        ('op', 'requires_grad_', 't3', ['l2'], {'flag': True}, None),
        ('op', 'gelu', 't4', ['l2'], {}, None),
        ('op', 'tri_', 't11', ['t4'], {'diagonal': 0, 'upper': False}, None)]),
    # tril_ writes an expanded tensor without the overlap error
    'tril_inplace_expanded': _p([
        ('leaf', 'l2', (4,), 'int32', False, 157098624),
        ('op', 'expand', 't8', ['l2'], {'shape': [2, 4]}, 'enable_grad_in_no_grad'),
        ('op', 'tri_', 't11', ['t8'], {'diagonal': -1, 'upper': True}, None)]),
    # fuzz seed 81119: after a refused grad_fn regeneration (a no-grad view written since) the
    # first register_hook raises, the second finds PyTorch's hook table and adds its hook silently
    'register_hook_after_refused_grad_fn_twice': _p([
        ('leaf', 'l1', (3, 1, 3), 'float64', True, 944446015),
        ('op', 'view_write', 't3', ['l1'], {'dim': 1, 'index': -1, 'value': 2}, 'no_grad'),
        ('hook', 't3', 'h5', False),
        ('hook', 't3', 'h6', False)]),
    # --- round 4 (fresh seeds 200,000-234,999, all three tables) ---
    # fuzz seed 200448: a leaf that stopped requiring grad after the graph was built keeps no
    # gradient (PyTorch's AccumulateGrad leaves .grad alone)
    'accumulate_into_leaf_that_stopped_requiring_grad': _p([
        ('leaf', 'l1', (4,), 'float32', True, 433100006),
        ('op', 'abs', 't2', ['l1'], {}, None),
        ('op', 'requires_grad_', 't12', ['l1'], {'flag': False}, None)],
        ('backward', ['t2'], None, False, True, False)),
    # fuzz seed 211512: ... but its post-accumulate hooks still run (seeing .grad None)
    'post_accumulate_hook_of_leaf_that_stopped_requiring_grad': _p([
        ('leaf', 'l2', (1, 4), 'float64', True, 690827351),
        ('post_acc', 'l2', 'h3'),
        ('op', 'kthvalue', 't4', ['l2'], {'dim': 0, 'k': 1, 'keepdim': True, 'pick': 0}, None),
        ('op', 'requires_grad_', 't7', ['l2'], {'flag': False}, 'no_grad')],
        ('backward', ['t4'], None, False, False, True)),
    # fuzz seed 200227: which of tied values kthvalue returns is ATen's quickselect's choice
    'kthvalue_ties_follow_aten_quickselect': _p([
        ('leaf', 'l2', (3, 3, 3), 'float32', True, 444539706),
        ('op', 'cumsum', 't4', ['l2'], {'dim': 2}, None),
        ('op', 'data_assign', 't5', ['t4'], {}, None),
        ('op', 'kthvalue', 't13', ['t5'], {'dim': -1, 'k': 1, 'keepdim': True, 'pick': 1}, None)]),
    # fuzz seed 202428: empty inputs return before the dtype check (median of empty bool)
    'median_of_empty_bool': _p([
        ('leaf', 'l1', (0,), 'bool', True, 477847433),
        ('op', 'median', 't8', ['l1'], {}, 'no_grad')]),
    # fuzz seed 212458: cummax of an empty tensor does not check its dim
    'cummax_of_empty_skips_dim_check': _p([
        ('leaf', 'l1', (0, 3), 'float32', True, 679124187),
        ('op', 'cummax', 't4', ['l1'], {'dim': 2, 'pick': 1}, 'enable_grad_in_no_grad')]),
    # fuzz seed 205741: unique(dim=) of an empty tensor: ATen's RuntimeError for 0-sized dims
    'unique_dim_of_empty': _p([
        ('leaf', 'l1', (1, 2, 3), 'int32', True, 587261476),
        ('op', 'index_bool_scalar', 't4', ['l1'], {'b': False}, None),
        ('op', 'unique', 't9', ['t4'], {'dim': 3, 'inverse': False, 'sorted': True}, None)]),
    # fuzz seed 203238: softmax of an empty tensor with an integral dtype= is accepted
    'softmax_integral_dtype_of_empty': _p([
        ('leaf', 'l2', (0, 1), 'bool', True, 677870596),
        ('op', 'amax', 't3', ['l2'], {'dim': 1, 'keepdim': False}, None),
        ('op', 'dtype_kw', 't7', ['t3'], {'dtype': 'int64', 'fn': 'softmax'}, None)]),
    # fuzz seed 202679: integer division by zero raises only when an element is computed
    'integer_division_by_zero_of_empty': _p([
        ('leaf', 'l1', (0,), 'bool', False, 799120138),
        ('leaf', 'l2', (0,), 'int64', False, 477029695),
        ('op', 'remainder', 't4', ['l2', 'l1'], {}, None),
        ('leaf', 'l8', (), 'bool', True, 918870253),
        ('op', 'floor_divide', 't9', ['t4', 'l8'], {}, None)]),
    # fuzz seed 203147: an in-place op on a view of a leaf whose requires_grad was turned off
    # still raises (PyTorch tests that the view requires grad and its base is a leaf)
    'inplace_on_view_of_leaf_that_stopped_requiring_grad': _p([
        ('leaf', 'l1', (2, 2, 1), 'float64', True, 655049700),
        ('leaf', 'l4', (), 'float32', True, 758219018),
        ('op', 'unsqueeze', 't9', ['l1'], {'dim': -1}, None),
        ('op', 'requires_grad_', 't10', ['l1'], {'flag': False}, None),
        ('op', 'sub_', 't15', ['t9', 'l4'], {}, None)]),
    # fuzz seed 203660: a saved input detached in place since: backward raises
    'saved_input_detached_in_place': _p([
        ('leaf', 'l1', (1,), 'float32', True, 780659379),
        ('op', 'exp', 't3', ['l1'], {}, None),
        ('leaf', 'l4', (1,), 'float32', False, 757181362),
        ('op', 'bce_logits', 't5', ['t3', 'l4'], {'reduction': 'sum'}, None),
        ('op', 'detach_', 't6', ['t3'], {}, None)],
        ('backward', ['t5'], ['l1'], False, False, False)),
    # fuzz seed 209316: a view made without a graph follows its base's flag (base.detach_())
    'view_without_graph_follows_base_detach_': _p([
        ('leaf', 'l2', (1,), 'float32', True, 324732859),
        ('op', 'squeeze', 't8', ['l2'], {}, 'no_grad'),
        ('op', 'detach_', 't9', ['l2'], {}, None)]),
    # fuzz seed 200856: sort of an expanded tensor is laid out as empty_like (row-major here)
    'sort_of_expanded_layout': _p([
        ('leaf', 'l1', (2,), 'float32', False, 251419847),
        ('op', 'expand', 't2', ['l1'], {'shape': [2, 2]}, 'set_grad_enabled'),
        ('op', 'sort', 't4', ['t2'], {'descending': False, 'dim': -1, 'pick': 0,
                                      'stable': True}, None)]),
    # fuzz seed 202018: an in-place op's saved copy of its target keeps the target's layout
    # (PyTorch's clone), so the gradients computed from it are laid out as PyTorch's
    'inplace_saved_copy_keeps_layout': _p([
        ('leaf', 'l1', (4, 3, 1), 'float32', True, 850597470),
        ('op', 'rot90', 't6', ['l1'], {'k': -1}, None),
        ('op', 'clamp_', 't7', ['t6'], {}, None)],
        ('grad', ['t7'], ['l1', 't6'], True, False, False)),
    # fuzz seed 208942: a stale view with a node of its own, its base no longer requiring grad,
    # is rebuilt as AsStridedBackward0 (with an empty edge)
    'stale_view_rebuilt_after_base_stopped_requiring_grad': _p([
        ('leaf', 'l2', (2, 3), 'float64', True, 45449072),
        ('op', 'mT', 't7', ['l2'], {}, None),
        ('op', 'requires_grad_', 't10', ['l2'], {'flag': False}, None),
        ('leaf', 'l12', (1, 1), 'float32', False, 491543071),
        ('op', 'setitem_slice', 't13', ['l2', 'l12'], {'dim': 0, 'start': 0, 'step': 2,
                                                      'stop': 3}, 'enable_grad_in_no_grad')]),
    # fuzz seed 203327: add(bool, bool, alpha=2) computes in bool (alpha cast to True)
    'add_bool_alpha': _p([
        ('leaf', 'l1', (4,), 'bool', True, 694286178),
        ('op', 'amax', 't4', ['l1'], {'dim': -1, 'keepdim': False}, 'no_grad'),
        ('op', 'out_variant', 't5', ['l1', 't4'], {'dtype': 'float64', 'kind': 1}, None)]),
    # fuzz seed 233232: rot90 over a size-1 dim is a fresh tensor, never a view of its input
    'rot90_is_fresh': _p([
        ('leaf', 'l1', (1, 2, 2), 'float32', True, 522011966),
        ('op', 'rot90', 't3', ['l1'], {'k': -1}, None),
        ('op', 'setitem_list', 't6', ['t3', 'l1'], {'dim': 0, 'idx': [1, 1, 1]}, None)]),
    # fuzz seed 231147: float32 gelu of +inf is NaN on a contiguous input (ATen's vector loop)
    'gelu_of_inf_float32': _p([
        ('leaf', 'l2', (4, 4, 4), 'float32', True, 585373845),
        ('leaf', 'l3', (4, 1, 4), 'float32', True, 763994267),
        ('op', 'addcmul', 't4', ['l2', 'l3'], {'value': 1}, None),
        ('op', 'scalar_mix', 't6', ['t4'], {'op': 'true_divide', 'value': 0}, None),
        ('op', 'gelu', 't15', ['t6'], {}, None)]),
    # fuzz seed 234740: layer_norm's create_graph gradient reads the saved statistics (its
    # input written in place since, under saved-tensor hooks that skip the version check)
    'layer_norm_create_graph_reads_saved_stats': _p([
        ('leaf', 'l1', (1, 3, 1), 'float64', True, 440001727),
        ('op', 'clone', 't3', ['l1'], {}, None),
        ('leaf', 'l5', (1, 1), 'float64', True, 791354608),
        ('op', 'layer_norm', 't6', ['t3', 'l5'], {}, None),
        ('op', 'leaky_relu_inplace', 't7', ['t3'], {'slope': 0.01}, 'set_grad_enabled')],
        ('grad', ['t7', 't6'], None, True, True, False), saved_hooks=True),
    # fuzz seed 243455: unique keeps each NaN a value of its own (inverse and counts too)
    'unique_nan_values_distinct': _p([
        ('leaf', 'l1', (4, 3), 'float64', True, 610995384),
        ('op', 'abs', 't3', ['l1'], {}, None),
        ('op', 'median', 't4', ['t3'], {}, None),
        ('op', 'pow', 't5', ['l1', 't4'], {'exp': 0.5}, None),
        ('op', 'unique', 't8', ['t5'], {'dim': None, 'inverse': True, 'sorted': True}, None)]),
    # fuzz seed 210718: leaky_relu keeps ATen's signed zeros (0 * -0.1 is -0.0; a division by
    # it is -inf), seen through a saved value written in place under saved-tensor hooks
    'leaky_relu_signed_zero': _p([
        ('leaf', 'l1', (1, 3), 'float32', True, 737432428),
        ('op', 'relu', 't3', ['l1'], {}, 'enable_grad_in_no_grad'),
        ('op', 'div', 't5', ['l1', 't3'], {}, None),
        ('op', 'alias', 't7', ['t3'], {}, None),
        ('op', 'movedim', 't8', ['t5'], {'dst': 1, 'src': 0}, None),
        ('op', 'leaky_relu_inplace', 't9', ['t7'], {'slope': -0.1}, 'set_grad_enabled')],
        ('backward', ['t8'], None, False, False, False), saved_hooks=True),
    # fuzz seed 213928: a view given new .data is rebuilt (AsStridedBackward0) with its own
    # geometry, not an offset into its base's memory it no longer shares
    'view_with_new_data_rebuilt_from_its_geometry': _p([
        ('leaf', 'l2', (1, 1, 2), 'float32', True, 48018959),
        ('op', 'mT', 't4', ['l2'], {}, None),
        ('op', 'data_assign', 't5', ['t4'], {}, None),
        ('leaf', 'l9', (1, 2, 1), 'float64', True, 333905900),
        ('op', 'add_', 't10', ['t5', 'l9'], {}, 'set_grad_enabled')],
        ('backward', ['t10'], None, False, False, False)),
    # fuzz seed 206688: nll_loss outputs 0 for an ignored target whatever its input holds
    'nll_loss_ignored_target_of_nan': _p([
        ('leaf', 'l1', (1, 1, 1), 'float32', True, 232934001),
        ('leaf', 'l2', (3, 2), 'float32', True, 638595863),
        ('op', 'pow', 't3', ['l1', 'l2'], {'exp': None}, 'no_grad'),
        ('op', 'nll_loss', 't4', ['t3'], {'label_smoothing': 0.1, 'reduction': 'none',
                                          'target': [[-100, 2]]}, None)]),
    # fuzz seed 254501: nonzero(as_tuple=True) of a 0-d tensor returns views (detach_ refuses)
    'nonzero_tuple_of_0d_is_views': _p([
        ('leaf', 'l1', (2, 1), 'float32', True, 902387423),
        ('leaf', 'l3', (2, 1), 'float32', True, 780579585),
        ('op', 'bce', 't4', ['l1', 'l3'], {'reduction': 'sum'}, None),
        ('op', 'float', 't6', ['t4'], {}, None),
        ('op', 'nonzero', 't7', ['t6'], {'tup': True}, None),
        ('op', 'detach_', 't11', ['t7'], {}, None)]),
    # fuzz seed 303242: logcumsumexp rounds as ATen's kernel, so remainder after it agrees
    'logcumsumexp_rounding_then_remainder': _p([
        ('leaf', 'l1', (2, 3), 'float32', True, 476078263),
        ('op', 'logcumsumexp', 't4', ['l1'], {'dim': -1}, 'enable_grad_in_no_grad'),
        ('op', 'remainder', 't5', ['t4', 'l1'], {}, 'enable_grad_in_no_grad')]),
    # fuzz seed 302722: a leaf made a result by an in-place op since the graph was built:
    # "leaf variable has been moved into the graph interior"
    'leaf_moved_into_graph_interior': _p([
        ('leaf', 'l1', (3, 3), 'float64', True, 761778591),
        ('leaf', 'l2', (3,), 'float32', False, 587230320),
        ('op', 'where', 't3', ['l1', 'l2'], {}, None),
        ('op', 'requires_grad_', 't4', ['l1'], {'flag': False}, None),
        ('op', 'add_', 't7', ['t4', 't3'], {}, None)],
        ('backward', ['t3', 't4'], None, False, False, True)),
    # fuzz seed 301054: a NaN written into an integer tensor by a masked fill raises
    'masked_fill_nan_into_int': _p([
        ('leaf', 'l1', (4, 1), 'int64', True, 180552346),
        ('op', 'tri_', 't2', ['l1'], {'diagonal': 1, 'upper': False}, None),
        ('op', 'index_neg_slice', 't5', ['t2'], {'start': -2, 'stop': None},
         'set_grad_enabled'),
        ('op', 'div', 't6', ['t2', 't5'], {}, None),
        ('op', 'setitem_mask', 't7', ['t5', 't6'], {}, None)]),
    # fuzz seed 53 (fourth table): reflection pad of a transposed input is row-major
    'reflection_pad_layout': _p([
        ('leaf', 'l2', (4, 4), 'float32', False, 801292594),
        ('op', 'view_inplace', 't3', ['l2'], {'dim': -1, 'dim2': -2, 'kind': 1},
         'set_grad_enabled'),
        ('op', 'pad_mode', 't8', ['t3'], {'mode': 'reflect', 'pad': [2, 0]}, None)]),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_fuzz_regression(torch, name):
    program = REGRESSIONS[name]
    assert diff(run(hookgrad, program), run(torch, program)) is None


_WARN_ONCE = """
import sys, warnings
lib = __import__(sys.argv[1])
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    x = lib.tensor(2.0, requires_grad=True)
    y = x * 2
    (y * y).backward(create_graph=True, inputs=[y])  # only a non-leaf gets a .grad
    (x * 3).backward(create_graph=True)
print(sum("create_graph=True" in str(w.message) for w in caught))
"""


def test_backward_create_graph_warns_once_on_entry():
    # PyTorch's engine warns on entry to backward(create_graph=True), once per process, even
    # when only a non-leaf input accumulates: fresh processes, as the warning is process-wide
    import subprocess
    import sys
    counts = [subprocess.run([sys.executable, "-c", _WARN_ONCE, lib], capture_output=True,
                             text=True, check=True).stdout.strip() for lib in ("torch", "hookgrad")]
    assert counts == ["1", "1"]


def test_bool_tensor_to_a_bool_power_stays_bool(torch):
    # fuzz class "bool ** True": NumPy's bool power answers int8; PyTorch keeps bool
    import hookgrad

    def run(lib):
        a = lib.tensor([True, False])
        outs = [a ** True, a ** False, a ** 2, a ** 2.0, a.pow(True)]
        b = a.clone()
        b.pow_(False)
        outs.append(b)
        return [(o.tolist(), str(o.dtype)) for o in outs]

    assert run(hookgrad) == run(torch)


def test_group_norm_of_empty_groups_is_quiet_and_as_torch(torch):
    # fuzz seeds 34506/34970 (both tables): NumPy's "Mean of empty slice" warning; PyTorch's
    # kernel answers mean 0 and rstd nan for an empty group, silently, forward and backward
    import warnings

    import hookgrad

    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x = lib.zeros(2, 2, 0, requires_grad=True)
            mean, rstd = lib.native_group_norm(x.detach(), None, None, 2, 2, 0, 1, 1e-5)[1:]
            lib.nn.functional.group_norm(x, 1).sum().backward()
            return [mean.tolist(), str(rstd.tolist()), list(x.grad.shape)]

    assert run(hookgrad) == run(torch)


def test_nll_loss_mean_over_no_counted_target_gives_zero_grads(torch):
    # fuzz seeds 20002/31309: every target ignored (or of weight 0) makes the mean 0/0; PyTorch's
    # backward leaves ignored entries at 0 (nan only where a counted target has weight 0)
    import hookgrad

    def run(lib):
        F = lib.nn.functional
        x = lib.tensor([[0.3, 0.5, 0.2], [0.1, 0.2, 0.7]], requires_grad=True)
        w = lib.tensor([0.0, 1.0, 1.0])
        cases = [lambda: F.nll_loss(x[0], lib.tensor(-100)),
                 lambda: F.cross_entropy(x, lib.tensor([-100, -100])),
                 lambda: F.cross_entropy(x, lib.tensor([5, 5]), ignore_index=5,
                                         label_smoothing=0.1),
                 lambda: F.nll_loss(x, lib.tensor([0, -100]), weight=w),
                 lambda: F.nll_loss(x, lib.tensor([1, -100]), weight=w)]
        out = []
        for case in cases:
            x.grad = None
            loss = case()
            loss.backward()
            out.append((str(loss.item()), str(x.grad.tolist())))
        return out

    assert run(hookgrad) == run(torch)


def test_results_of_identity_parameters_are_fresh_tensors(torch):
    # fuzz seed 50468's class: ops whose kernel is the identity for some parameters (1x1 pooling
    # windows, shuffles by 1, diff of order 0) return a fresh tensor, as PyTorch's
    import numpy as np

    import hookgrad

    F = "nn.functional."
    calls = [(F + "max_pool1d", (1,)), (F + "max_pool2d", (1,)), (F + "max_pool3d", (1,)),
             (F + "pixel_shuffle", (1,)), (F + "pixel_unshuffle", (1,)),
             (F + "channel_shuffle", (1,)), (F + "channel_shuffle", (2,)), ("diff", (0,)),
             # seed 70115: the window sum of an unpadded average pool accumulated into the input
             (F + "avg_pool1d", (2, 1)), (F + "avg_pool2d", (2, 1)), (F + "avg_pool3d", (1, 1))]

    def run(lib, name, args):
        fn = lib
        for part in name.split("."):
            fn = getattr(fn, part)
        out = []
        for rg in (False, True):
            x = lib.tensor(np.arange(16.0, dtype=np.float32).reshape(1, 2, 2, 4),
                           requires_grad=rg)
            y = fn(x.unsqueeze(0) if "3d" in name else x[0] if "1d" in name else x, *args)
            if rg:
                y.sum().backward()
                out.append((type(y.grad_fn).__name__, x.grad.tolist()))
            else:
                x.add_(100)  # a view of x would change with it
                out.append(y.tolist())
        return out

    for name, args in calls:
        assert run(hookgrad, name, args) == run(torch, name, args), name


def test_norms_of_an_empty_batch_as_torch(torch):
    # fuzz seed 50061's class: ATen returns input.clone() (* weight[0] + bias[0]) for an empty
    # batch norm input, before its checks; group norm of an empty batch keeps its statistics
    import hookgrad

    def run(lib):
        F = lib.nn.functional
        out = []
        cases = [lambda x: F.batch_norm(x, None, None, training=True),
                 lambda x: F.batch_norm(x, None, None, training=False),
                 lambda x: F.batch_norm(x, None, None, lib.ones(3, requires_grad=True),
                                        lib.ones(3, requires_grad=True), training=True),
                 lambda x: F.instance_norm(x),
                 lambda x: F.instance_norm(x, weight=lib.ones(3), bias=lib.ones(3)),
                 lambda x: F.group_norm(x, 3, lib.ones(3, requires_grad=True)),
                 lambda x: F.group_norm(x, 1)]
        for case in cases:
            packs = []

            def pack(t, packs=packs):
                packs.append(tuple(t.shape))
                return t

            x = lib.zeros(0, 3, 2, requires_grad=True)
            try:
                with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    y = case(x)
                (g,) = lib.autograd.grad(y.sum(), x, allow_unused=True)
                out.append((tuple(y.shape), type(y.grad_fn).__name__, packs, tuple(g.shape)))
            except Exception as e:
                out.append(type(e).__name__)
        return out

    assert run(hookgrad) == run(torch)


def test_adaptive_avg_pool_of_inf_and_nan_stays_in_its_windows(torch):
    # fuzz seed 50777's class: a dense averaging matrix multiplies its zeros with inf (nan
    # everywhere); PyTorch's window loops only sum the windows holding the value (2-d, 1-d,
    # 3-d, forward and backward)
    import numpy as np

    import hookgrad

    def run(lib, value):
        F = lib.nn.functional
        a = np.arange(20, dtype=np.float32).reshape(1, 4, 5)
        a[0, 1, 2] = value
        out = []
        for f in (lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
                  lambda x: F.adaptive_avg_pool1d(x[0], 2),
                  lambda x: F.adaptive_avg_pool3d(x.unsqueeze(0), (1, 3, 2))):
            x = lib.tensor(a, requires_grad=True)
            y = f(x)
            g = lib.zeros_like(y)
            g.view(-1)[0] = value
            y.backward(g)
            out.append((str(y.tolist()), str(x.grad.tolist())))
        return out

    for value in (float("inf"), -float("inf"), float("nan")):
        assert run(hookgrad, value) == run(torch, value)


def test_pooling_gradients_under_create_graph_follow_the_input(torch):
    # the class of fuzz seeds 30045/32969/34070: every pooling backward op takes the input, so
    # with create_graph=True the gradient requires grad (and a second backward through it gives
    # the input no gradient) whether or not the incoming gradient does
    import numpy as np

    import hookgrad

    def run(lib):
        F = lib.nn.functional
        a = np.arange(32.0).reshape(1, 2, 4, 4) % 7
        cases = [lambda x: F.max_pool2d(x, 2), lambda x: F.avg_pool2d(x, 2, 1),
                 lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
                 lambda x: F.adaptive_max_pool2d(x, (3, 2)),
                 lambda x: F.max_pool1d(x[0], 2), lambda x: F.avg_pool1d(x[0], 3, 1, 1),
                 lambda x: F.max_pool3d(x, 2), lambda x: F.avg_pool3d(x, 2),
                 lambda x: F.adaptive_avg_pool3d(x, 2), lambda x: F.adaptive_max_pool3d(x, 2)]
        out = []
        for case in cases:
            x = lib.tensor(a, requires_grad=True)
            y = case(x)
            (g,) = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
            (gg,) = lib.autograd.grad(g.sum(), x, allow_unused=True, materialize_grads=True)
            out.append((g.requires_grad, g.tolist(), gg.tolist()))
        return out

    assert run(hookgrad) == run(torch)


def test_loss_and_norm_layouts_as_torch(torch):
    # the class of fuzz seeds 60309/60634/61008/61385: fused losses lay their unreduced result
    # out by TensorIterator (bce_with_logits: the target's), their gradients row-major
    # (mse, smooth L1, Huber) or like the input (BCE); rms_norm and batch norm are row-major
    import numpy as np

    import hookgrad

    def run(lib):
        F = lib.nn.functional
        cases = {
            "mse": lambda a, b: F.mse_loss(a, b, reduction="none"),
            "smooth_l1": lambda a, b: F.smooth_l1_loss(a, b, reduction="none"),
            "huber": lambda a, b: F.huber_loss(a, b, reduction="none"),
            "bce": lambda a, b: F.binary_cross_entropy(a, b, reduction="none"),
            "bce_logits": lambda a, b: F.binary_cross_entropy_with_logits(
                a, b, reduction="none"),
            "bce_logits_pw": lambda a, b: F.binary_cross_entropy_with_logits(
                a, b, pos_weight=lib.ones(3), reduction="none"),
            "rms_norm": lambda a, b: F.rms_norm(a, (3,), weight=lib.ones(3)),
            "batch_norm": lambda a, b: F.batch_norm(a, None, None, training=True),
        }
        rng = np.random.default_rng(0)
        xa, xb = rng.uniform(0.1, 0.9, (2, 2, 4, 3)).astype(np.float32)
        out = []
        for name, f in cases.items():
            for pa, pb in [((0, 1, 2), (2, 1, 0)), ((2, 1, 0), (0, 1, 2)),
                           ((1, 0, 2), (1, 0, 2))]:
                ta = lib.tensor(np.ascontiguousarray(xa.transpose(pa)), requires_grad=True)
                tb = lib.tensor(np.ascontiguousarray(xb.transpose(pb)), requires_grad=True)
                a, b = ta.permute(*np.argsort(pa)), tb.permute(*np.argsort(pb))
                log = []
                a.register_hook(lambda g: log.append(g.stride()))
                b.register_hook(lambda g: log.append(g.stride()))
                y = f(a, b)
                y.backward(lib.ones_like(y))
                out.append((name, pa, pb, y.stride(), log))
        return out

    assert run(hookgrad) == run(torch)


def test_mm_gradients_follow_operand_layouts(torch):
    # the class of fuzz seed 62294: mm and addmm give a column-major operand a column-major
    # gradient (ATen's mm_mat1_backward/mm_mat2_backward), a row-major one a row-major one
    import hookgrad

    def run(lib):
        out = []
        for ta in (False, True):
            for tb in (False, True):
                a = lib.arange(12.0).reshape((4, 3) if ta else (3, 4)).requires_grad_()
                b = lib.arange(20.0).reshape((5, 4) if tb else (4, 5)).requires_grad_()
                for f in (lambda x, y: x @ y, lambda x, y: lib.addmm(lib.ones(3, 5), x, y),
                          lambda x, y: lib.nn.functional.linear(x, y.t())):
                    x, y = (a.t() if ta else a), (b.t() if tb else b)
                    log = []
                    x.register_hook(lambda g: log.append(g.stride()))
                    y.register_hook(lambda g: log.append(g.stride()))
                    f(x, y).sum().backward()
                    out.append(log)
        return out

    assert run(hookgrad) == run(torch)


def test_group_norm_rounding_as_torch(torch):
    # the class of fuzz seeds 62961/64408: ATen's group norm computes fma(x, scale, fma(-scale,
    # mean, beta)) forward and fma(c1, dy, c2*x) + c3 backward, rstd in double; over constant or
    # one-element groups the results are rounding noise these operations decide
    import numpy as np

    import hookgrad

    rng = np.random.default_rng(0)

    def run(lib, x, dy, w, b, groups):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.group_norm(xt, groups, None if w is None else lib.tensor(w),
                                         None if b is None else lib.tensor(b))
        y.backward(lib.tensor(dy))
        return y.detach().numpy(), xt.grad.numpy()

    for shape, groups in [((2, 3), 3), ((2, 3, 1), 3), ((4, 4, 2), 4), ((2, 2, 1), 1)]:
        for affine in (False, True):
            x = rng.standard_normal(shape).astype(np.float32)
            x[1] = x[1].flat[0]  # a constant sample
            dy = rng.standard_normal(shape).astype(np.float32)
            w = rng.standard_normal(shape[1]).astype(np.float32) if affine else None
            b = rng.standard_normal(shape[1]).astype(np.float32) if affine else None
            mine, theirs = run(hookgrad, x, dy, w, b, groups), run(torch, x, dy, w, b, groups)
            for m, t in zip(mine, theirs):
                np.testing.assert_allclose(m, t, rtol=1e-4, atol=1e-5)
