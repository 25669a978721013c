"""Containers: `Sequential`, `ModuleList`, `ModuleDict`, `ParameterList`, `ParameterDict`."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections import abc as container_abcs
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _addindent(s_: str, num_spaces: int) -> str:
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    return first + "\n" + "\n".join((num_spaces * " ") + line for line in s)


def _abs_index(container: Any, idx: Any) -> str:
    idx = operator.index(idx)
    if not (-len(container) <= idx < len(container)):
        raise IndexError(f"index {idx} is out of range")
    if idx < 0:
        idx += len(container)
    return str(idx)


def _renumber(container: Module) -> None:
    values = list(container._modules.values())
    container._modules = OrderedDict((str(i), m) for i, m in enumerate(values))


def _dir_without_digits(container: Module) -> list:
    return [key for key in Module.__dir__(container) if not key.isdigit()]


class Sequential(Module):
    """Modules called in order, each on the previous one's output.

    Accepts modules as positional arguments or one ``OrderedDict`` of named modules; supports
    indexing, slicing (a new ``Sequential``), ``append``/``insert``/``extend``/``pop``,
    ``del``, ``+``, ``+=``, ``*``.

    Example:
        >>> import hookgrad as torch
        >>> seq = torch.nn.Sequential(torch.nn.Identity(), torch.nn.Identity())
        >>> len(seq[1:])
        1

    Mirrors: ``torch.nn.Sequential``.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator: Iterable, idx: Any) -> Any:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx: slice | int) -> Any:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx: slice | int) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{str(type(other))} is given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other: Any) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{str(type(other))} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module at `key`."""
        v = self[key]
        del self[key]
        return v

    def __dir__(self) -> list:
        return _dir_without_digits(self)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input

    def append(self, module: Module) -> Sequential:
        """Add `module` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert `module` before position `index`."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of `sequential`."""
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    """A list of submodules, registered so that parameters and hooks see them.

    Mirrors: ``torch.nn.ModuleList``.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[_abs_index(self, idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, _abs_index(self, idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, _abs_index(self, idx))
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        spans = [[0, 0]]
        blocks = [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
                continue
            spans.append([i, i])
            blocks.append(r)
        lines = []
        for (start, end), b in zip(spans, blocks):
            local = f"({start}): {b}"
            if start != end:
                local = f"({start}-{end}): {end - start + 1} x {b}"
            lines.append(_addindent(local, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list:
        return _dir_without_digits(self)

    def insert(self, index: int, module: Module) -> None:
        """Insert `module` before position `index`."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Add `module` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module at `key`."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of `modules`."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of submodules.

    Mirrors: ``torch.nn.ModuleDict``.
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every item."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module at `key`."""
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Any:
        """The keys."""
        return self._modules.keys()

    def items(self) -> Any:
        """The ``(key, module)`` pairs."""
        return self._modules.items()

    def values(self) -> Any:
        """The modules."""
        return self._modules.values()

    def update(self, modules: Any) -> None:
        """Add modules from a mapping or an iterable of ``(key, module)`` pairs."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            _check_pair("ModuleDict", j, m)
            self[m[0]] = m[1]


def _check_pair(kind: str, j: int, m: Any) -> None:
    if not isinstance(m, container_abcs.Iterable):
        raise TypeError(f"{kind} update sequence element #{j} should be Iterable; is"
                        + type(m).__name__)
    if not len(m) == 2:
        raise ValueError(f"{kind} update sequence element #{j} has length {len(m)}; 2 is "
                         "required")


def _param_line(k: Any, p: Any, type_str: str) -> str:
    if isinstance(p, Tensor):
        size_str = "x".join(str(size) for size in p.size())
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({k}): {kind} containing: [{type_str} of size {size_str}]"
    return f"  ({k}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of parameters (plain tensors are wrapped as `Parameter`).

    Mirrors: ``torch.nn.ParameterList``.
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, _abs_index(self, idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        key = _abs_index(self, idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list:
        return _dir_without_digits(self)

    def append(self, value: Any) -> ParameterList:
        """Add `value` at the end."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every value of `values`."""
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, str(getattr(p, "dtype", "")))
                         for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (plain tensors are wrapped as `Parameter`).

    Mirrors: ``torch.nn.ParameterDict``.
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def copy(self) -> ParameterDict:
        """A shallow copy."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default: Any = None) -> Any:
        """``self[key]``, set to `default` first if absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every item."""
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        """Remove and return the value at `key`."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last ``(key, value)``."""
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        """``self[key]`` or `default`."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        """A new ParameterDict with `keys` set to `default`."""
        return ParameterDict((k, default) for k in keys)

    def keys(self) -> Any:
        """The keys."""
        return self._keys.keys()

    def items(self) -> Any:
        """The ``(key, value)`` pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Any:
        """The values."""
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add from a mapping (plain dicts in sorted key order) or ``(key, value)`` pairs."""
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                _check_pair("ParameterDict", j, p)
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        from hookgrad.nn.modules._registration import typename

        return "\n".join(_param_line(k, p, typename(p)) for k, p in self.items())

    def __call__(self, input: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
