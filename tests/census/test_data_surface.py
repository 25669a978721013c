"""torch.utils.data's smaller names (worker info, DataPipe bases, ExceptionWrapper) vs PyTorch."""

from __future__ import annotations

import importlib
import sys

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _dl(lib):
    return importlib.import_module(f"{lib.__name__}.utils.data.dataloader")


def test_worker_info_in_the_loading_process(torch):
    def run(lib):
        D = lib.utils.data

        class Items(D.IterableDataset):
            def __iter__(self):
                info = D.get_worker_info()
                return iter(range(6) if info is None else range(info.id, 6, info.num_workers))
        return D.get_worker_info(), [b.tolist() for b in D.DataLoader(Items(), batch_size=4)]
    assert run(hookgrad) == run(torch)


def test_module_reexports(torch):
    def run(lib):
        dl = _dl(lib)
        ds = importlib.import_module(f"{lib.__name__}.utils.data.dataset")
        return (dl.Dataset is lib.utils.data.Dataset, dl.IterDataPipe is lib.utils.data.IterDataPipe,
                dl.MapDataPipe is lib.utils.data.MapDataPipe, dl.logger.name.split(".")[-1],
                ds.Tensor is lib.Tensor, ds.randperm is lib.randperm,
                ds.default_generator is lib.default_generator, ds.Generator is lib.Generator,
                issubclass(lib.utils.data.IterDataPipe, lib.utils.data.IterableDataset),
                issubclass(lib.utils.data.MapDataPipe, lib.utils.data.Dataset))
    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("exc", [ValueError("bad"), KeyError("k"), IndexError(3)])
def test_exception_wrapper_reraises(torch, exc):
    def run(lib):
        try:
            raise exc
        except Exception:  # noqa: BLE001
            wrapped = _dl(lib).ExceptionWrapper(sys.exc_info(), where="in DataLoader worker 0")
        try:
            wrapped.reraise()
        except Exception as e:  # noqa: BLE001 - the type and first line are compared
            return type(e).__name__, str(e).splitlines()[0]
    assert run(hookgrad) == run(torch)


def test_functional_datapipe_and_chunk(torch):
    def run(lib):
        D = lib.utils.data

        class Source(D.IterDataPipe):
            def __iter__(self):
                return iter(range(4))

        name = "census2_plus"

        @D.functional_datapipe(name)
        class Plus(D.IterDataPipe):
            def __init__(self, dp, k=1):
                self.dp, self.k = dp, k

            def __iter__(self):
                return (x + self.k for x in self.dp)
        out = list(getattr(Source(), name)(k=10))
        try:
            D.functional_datapipe(name)(Plus)
        except Exception as e:  # noqa: BLE001
            dup = (type(e).__name__, str(e))
        try:
            Source().no_such_pipe
        except AttributeError as e:
            missing = str(e)
        chunk = D.DataChunk([1, 2])
        del D.IterDataPipe.functions[name]
        return out, dup, missing, chunk.as_str(" "), list(chunk.raw_iterator()), chunk == [1, 2]
    assert run(hookgrad) == run(torch)


def test_swap_tensors(torch):
    def run(lib):
        a = lib.nn.Parameter(lib.zeros(2))
        b = lib.arange(3.0)
        a_id, b_id = id(a), id(b)
        a.tag = "was a"
        lib.utils.swap_tensors(a, b)
        out = [id(a) == a_id, id(b) == b_id, type(a).__name__, type(b).__name__, a.tolist(),
               b.tolist(), getattr(b, "tag", None), getattr(a, "tag", None), b.requires_grad]
        m = lib.nn.Linear(2, 1)
        y = m(lib.ones(1, 2)).sum()
        y.backward()
        lib.utils.swap_tensors(m.weight, lib.nn.Parameter(lib.full((1, 2), 5.0)))
        out.append(m.weight.tolist())
        import weakref
        c, d = lib.ones(1), lib.ones(1)
        ref = weakref.ref(c)  # noqa: F841 - held so that swapping refuses
        try:
            lib.utils.swap_tensors(c, d)
        except RuntimeError as e:
            out.append(str(e))
        return out
    assert run(hookgrad) == run(torch)
