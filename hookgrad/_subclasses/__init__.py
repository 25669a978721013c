"""``torch._subclasses``: fake tensors, as far as libraries ask about them at load time.

Mirrors: ``torch._subclasses``. hookgrad has no fake-tensor mode (its compile traces with real
tensors and symbolic sizes); `fake_tensor.is_fake` answers False for every value, which is what
PyTorch answers outside a fake mode.
"""

from hookgrad._subclasses.fake_tensor import FakeTensor, FakeTensorMode, is_fake

__all__ = ["FakeTensor", "FakeTensorMode", "is_fake"]
