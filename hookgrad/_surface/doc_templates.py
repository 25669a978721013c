"""The docstring templates PyTorch keeps as module attributes of ``torch.special`` and
``torch.linalg``, for ``str.format`` into the docs of functions that share arguments.

The keys are PyTorch's (tools that document wrappers of these functions format with them); the
texts describe the same arguments. ``sync_note_has_ex`` keeps its ``{}`` slot for the name of
the ``_ex`` variant.

Mirrors: ``torch.special.common_args``, ``torch.special.multi_dim_common``,
``torch.linalg.common_notes``.
"""

from __future__ import annotations

__all__: list[str] = []  # no torch-level names: `SPECIAL` and `LINALG` are installed

common_args = {
    "input": "input (Tensor): the input tensor.",
    "generator": "generator (:class:`torch.Generator`, optional): a pseudorandom number "
                 "generator for sampling",
    "out": "out (Tensor, optional): the output tensor.",
    "memory_format": "memory_format (:class:`torch.memory_format`, optional): the desired memory "
                     "format of\n        returned tensor. Default: ``torch.preserve_format``.",
}

multi_dim_common = {
    **common_args,
    "dtype": "dtype (:class:`torch.dtype`, optional): the desired data type of returned tensor.\n"
             "        If specified, the input tensor is casted to :attr:`dtype` before the "
             "operation\n        is performed. This is useful for preventing data type "
             "overflows. Default: None.",
    "keepdim": "keepdim (bool): whether the output tensor has :attr:`dim` retained or not.",
    "opt_keepdim": "\n    keepdim (bool, optional): whether the output tensor has :attr:`dim` "
                   "retained or not. Default: ``False``.\n",
    "dim": "dim (int or tuple of ints): the dimension or dimensions to reduce.",
    "keepdim_details": "\nIf :attr:`keepdim` is ``True``, the output tensor is of the same size"
                       "\nas :attr:`input` except in the dimension(s) :attr:`dim` where it is of "
                       "size 1.\nOtherwise, :attr:`dim` is squeezed (see :func:`torch.squeeze`), "
                       "resulting in the\noutput tensor having 1 (or ``len(dim)``) fewer "
                       "dimension(s).\n",
    "opt_dim": "\n    dim (int or tuple of ints, optional): the dimension or dimensions to "
               "reduce.\n",
    "opt_dim_all_reduce": "\n    dim (int or tuple of ints, optional): the dimension or "
                          "dimensions to reduce.\n        If ``None``, all dimensions are "
                          "reduced.\n",
}

common_notes = {
    "experimental_warning": 'This function is "experimental" and it may change in a future '
                            "PyTorch release.",
    "sync_note": "When inputs are on a CUDA device, this function synchronizes that device with "
                 "the CPU.",
    "sync_note_ex": "When the inputs are on a CUDA device, this function synchronizes only when "
                    ":attr:`check_errors`\\ `= True`.",
    "sync_note_has_ex": "When inputs are on a CUDA device, this function synchronizes that device "
                        "with the CPU. For a version of this function that does not synchronize, "
                        "see :func:`{}`.",
}

SPECIAL = {"common_args": common_args, "multi_dim_common": multi_dim_common}
LINALG = {"common_notes": common_notes}
