"""The DataPipe decorators and the pipeline graph behave as PyTorch's (issue 21's census)."""

from __future__ import annotations

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _error(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        # PyTorch appends "This exception is thrown by __iter__ of ..." on a second line
        return type(e).__name__, str(e).split("\n")[0]


def _plain(result, L):
    return repr(result).replace(f"_{L.__name__}", "")


def _classes(L):
    D = L.utils.data

    class Source(D.IterDataPipe):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

    class Zip(D.IterDataPipe):
        def __init__(self, *dps):
            self.dps = list(dps)
            self.seed, self.shuffle, self.shard = None, None, None

        def __iter__(self):
            return zip(*self.dps)

        def set_seed(self, seed):
            self.seed = seed
            return self

        def set_shuffle(self, shuffle):
            self.shuffle = shuffle
            return self

        def apply_sharding(self, num, idx):
            self.shard = (num, idx)

    # PyTorch finds the graph by pickling: the classes must be importable by name
    for cls in (Source, Zip):
        cls.__name__ = cls.__qualname__ = f"{cls.__name__}_{L.__name__}"
        globals()[cls.__name__] = cls
    return D, Source, Zip


def test_determinism_guard_and_non_deterministic(torch):
    def scenario(L):
        D, Source, _ = _classes(L)
        Random = D.non_deterministic(Source)
        Maybe = D.non_deterministic(lambda n: n > 2)(Source)
        out = [list(Random(2)), list(Maybe(5))]
        with D.guaranteed_datapipes_determinism():
            out += [_error(lambda: Random(2)), _error(lambda: Maybe(5)), list(Maybe(2))]
        out += [list(Random(1)), _error(lambda: D.non_deterministic(int)),
                _error(lambda: D.non_deterministic(3)),
                _error(lambda: D.non_deterministic(lambda n: 1)(Source)(1))]
        return out
    assert _plain(scenario(hookgrad), hookgrad) == _plain(scenario(torch), torch)


def test_type_validation_decorators(torch):
    def scenario(L):
        D, Source, _ = _classes(L)

        def consume(dp, k=0):
            return k
        consume.__annotations__ = {"dp": D.IterDataPipe, "k": int}
        consume = D.argument_validation(consume)

        class Checked(Source):
            @D.runtime_validation
            def __iter__(self):
                yield from range(self.n)

        out = [consume.__name__, _error(lambda: consume([1])), _error(lambda: consume(Source(1))),
               _error(lambda: list(Checked(2)))]
        with D.runtime_validation_disabled():
            out.append(list(Checked(2)))
        out += [_error(lambda: list(Checked(1))),
                _error(lambda: D.runtime_validation(lambda self: iter(())))]
        return out
    assert _plain(scenario(hookgrad), hookgrad) == _plain(scenario(torch), torch)


def test_graph_and_settings(torch):
    def scenario(L):
        D, Source, Zip = _classes(L)
        a, b = Source(2), Source(3)
        inner = Zip(a, b)
        top = Zip(inner, {"again": a})
        graph = D.graph.traverse_dps(top)

        def shape(g):
            return sorted((type(dp).__name__.split("_")[0], shape(sub)) for dp, sub in g.values())
        pipes = D.graph_settings.get_all_graph_pipes(graph)
        D.graph_settings.apply_shuffle_settings(top, shuffle=False)
        gen = L.Generator().manual_seed(0)
        D.graph_settings.apply_random_seed(top, gen)
        err = _error(lambda: D.graph_settings.apply_sharding(top, 2, 1))
        D.graph_settings.apply_sharding(inner, 4, 3)
        return (shape(graph), len(pipes), [type(p).__name__.split("_")[0] for p in pipes],
                (top.shuffle, inner.shuffle), top.seed is not None and inner.seed is not None,
                top.seed != inner.seed, err[0], inner.shard,
                _error(lambda: D.graph.traverse_dps([1])),
                D.DFIterDataPipe()._is_dfpipe(), issubclass(D.DFIterDataPipe, D.IterDataPipe),
                D.graph_settings.apply_shuffle_settings(a, None) is a)
    assert _plain(scenario(hookgrad), hookgrad) == _plain(scenario(torch), torch)
