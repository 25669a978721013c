"""Immutable list and dict types used for `Node` arguments.

A node's ``args``/``kwargs`` are shared between the node and the graph's use lists, so editing
them in place would leave ``users`` stale; the only way to change an argument is through the
`Node` API (``args`` setter, ``update_arg``, ``replace_input_with``).
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["immutable_list", "immutable_dict"]


def _no_mutation(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"'{type(self).__name__}' object does not support mutation. "
                    "If you are attempting to modify the kwargs or args of a torch.fx.Node "
                    "object, instead create a new copy of it and assign the copy to the node:\n"
                    "    new_args = ... # copy and mutate args\n"
                    "    node.args = new_args\n")


class immutable_list(list):  # noqa: N801 - torch's public name
    """A list that refuses in-place edits (it stays hashable for use in graph arguments).

    Mirrors: ``torch.fx.immutable_collections.immutable_list``.
    """

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self) -> tuple:
        return (immutable_list, (tuple(self),))


class immutable_dict(dict):  # noqa: N801 - torch's public name
    """A dict that refuses in-place edits.

    Mirrors: ``torch.fx.immutable_collections.immutable_dict``.
    """

    __delitem__ = __setitem__ = __ior__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self) -> tuple:
        return (immutable_dict, (tuple(self.items()),))
