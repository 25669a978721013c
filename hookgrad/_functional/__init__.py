"""Public op functions (``hookgrad.add``, ``hookgrad.sum``...): thin wrappers over `bind`.

Layer 4. One module per op family; each exports its public functions through ``__all__`` and
the Tensor methods it provides through ``METHODS`` (installed by `_tensor_methods`).
"""
