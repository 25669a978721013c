"""`PassBase` and `PassResult`: the interface a graph pass implements for `PassManager`.

Mirrors: ``torch.fx.passes.infra.pass_base``.
"""

from __future__ import annotations

import abc
from collections import namedtuple
from typing import Any

__all__ = ["PassBase", "PassResult"]


class PassResult(namedtuple("PassResult", ["graph_module", "modified"])):
    """What a pass returns: the (possibly new) module and whether it changed anything.

    Mirrors: ``torch.fx.passes.infra.pass_base.PassResult``.
    """

    __slots__ = ()

    def __new__(cls, graph_module: Any, modified: bool) -> PassResult:
        return super().__new__(cls, graph_module, modified)


class PassBase(abc.ABC):
    """A pass object: ``requires`` (precondition), ``call`` (the pass), ``ensures`` (after).

    Mirrors: ``torch.fx.passes.infra.pass_base.PassBase``.
    """

    def __call__(self, graph_module: Any) -> PassResult | None:
        self.requires(graph_module)
        result = self.call(graph_module)
        self.ensures(graph_module)
        return result

    @abc.abstractmethod
    def call(self, graph_module: Any) -> PassResult | None:
        """Run the pass on ``graph_module``."""

    def requires(self, graph_module: Any) -> None:  # noqa: B027 - optional hook
        """Check the pass's preconditions (nothing by default)."""

    def ensures(self, graph_module: Any) -> None:  # noqa: B027 - optional hook
        """Check the pass's postconditions (nothing by default)."""
