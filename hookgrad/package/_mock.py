"""Runtime of mocked modules; this file is copied verbatim into archives as ``_mock.py``.

It must stay self-contained (standard library only): packaged mock stubs import it from the
archive, where hookgrad itself may not be importable under this name.
"""

_MAGIC_METHODS = [
    "__abs__", "__add__", "__and__", "__bool__", "__bytes__", "__call__", "__ceil__",
    "__complex__", "__contains__", "__copy__", "__deepcopy__", "__delattr__", "__delitem__",
    "__dir__", "__divmod__", "__enter__", "__eq__", "__exit__", "__float__", "__floor__",
    "__floordiv__", "__ge__", "__getitem__", "__getstate__", "__gt__", "__hash__",
    "__iadd__", "__iand__", "__ifloordiv__", "__ilshift__", "__imod__", "__imul__", "__index__",
    "__instancecheck__", "__int__", "__invert__", "__ior__", "__ipow__", "__irshift__",
    "__isub__", "__iter__", "__itruediv__", "__ixor__", "__le__", "__len__", "__lshift__",
    "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__getattr__", "__or__",
    "__pos__", "__pow__", "__radd__", "__rand__", "__rdivmod__", "__reduce__",
    "__reversed__", "__rfloordiv__", "__rlshift__", "__rmatmul__",
    "__rmod__", "__rmul__", "__ror__", "__round__", "__rpow__", "__rrshift__", "__rshift__",
    "__rsub__", "__rtruediv__", "__rxor__", "__setitem__", "__setstate__", "__sizeof__",
    "__sub__", "__subclasscheck__", "__truediv__", "__trunc__", "__xor__",
]


class MockedObject:
    """Stands for any attribute of a mocked module; every use of it raises.

    Mirrors: ``torch.package._mock.MockedObject``.
    """

    _name: str

    def __new__(cls, *args, **kwargs):
        # Unpickling constructs objects through __new__ without _suppress_err: a pickle that
        # contains a mocked object fails here, loudly.
        if not kwargs.get("_suppress_err"):
            raise NotImplementedError(
                f"Object '{cls._name}' was mocked out during packaging but it is being used in"
                " '__new__'. If this error is happening during 'load_pickle', please ensure that"
                " your pickled object doesn't contain any mocked objects.")
        return super().__new__(cls)

    def __init__(self, name: str, _suppress_err: bool) -> None:
        self.__dict__["_name"] = name

    def __repr__(self) -> str:
        return f"MockedObject({self._name})"


def _raiser(method_name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"Object '{self._name}' was mocked out during packaging but it is being used in "
            f"{method_name}")

    method.__name__ = method_name
    return method


for _method_name in _MAGIC_METHODS:
    setattr(MockedObject, _method_name, _raiser(_method_name))

