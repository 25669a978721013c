"""Real hook-based tools, unmodified, on PyTorch and on hookgrad with only the import swapped.

Each test runs the same scenario (same weights, same input) with ``torch`` and with hookgrad
aliased as ``torch`` and compares what the tool reports.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.ecosystem._tools import (
    array,
    require_hookgrad,
    require_tool,
    restore_torchvision,
    run_with,
    set_weights,
    stub_torchvision,
)

pytestmark = pytest.mark.oracle

LIBS = ("torch", "hookgrad")


# ------------------------------------------------------------------------------- torchinfo
def _convnet(torch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Sequential(nn.Flatten(), nn.Linear(4 * 3 * 3, 8), nn.Dropout(0.1)), nn.Linear(8, 3))


def _torchinfo_summary(torch, torchinfo):
    m = _convnet(torch)
    set_weights(torch, m)
    s = torchinfo.summary(m, input_size=(2, 1, 8, 8), verbose=0, depth=3,
                          col_names=("input_size", "output_size", "num_params", "mult_adds",
                                     "trainable"))
    return str(s), s.total_params, s.trainable_params, s.total_mult_adds


def test_torchinfo_summary_matches():
    require_tool("torchinfo")
    ref = run_with("torch", ("torchinfo",), _torchinfo_summary)
    got = run_with("hookgrad", ("torchinfo",), _torchinfo_summary)
    assert got == ref


def _torchinfo_rnn(torch, torchinfo):
    m = torch.nn.LSTM(4, 6, num_layers=2, batch_first=True)
    return str(torchinfo.summary(m, input_size=(3, 5, 4), verbose=0))


def test_torchinfo_summary_of_lstm_matches():
    require_tool("torchinfo")
    assert run_with("hookgrad", ("torchinfo",), _torchinfo_rnn) == run_with(
        "torch", ("torchinfo",), _torchinfo_rnn)


# --------------------------------------------------------------------------------- torchviz
def _normalise_dot(source: str) -> str:
    ids: dict[str, str] = {}
    return re.sub(r"\b\d{6,}\b", lambda m: ids.setdefault(m.group(0), f"n{len(ids)}"), source)


def _torchviz_graph(torch, torchviz, show_attrs=False):
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    set_weights(torch, m)
    x = array(torch, (2, 3)).requires_grad_()
    y = (m(x) * x.sigmoid().sum(1, keepdim=True)).exp().mean()
    dot = torchviz.make_dot(y, params={**dict(m.named_parameters()), "x": x},
                            show_attrs=show_attrs, show_saved=True)
    return _normalise_dot(dot.source)


# torchviz compares versions with distutils' LooseVersion, which warns (whatever the library)
_LOOSE_VERSION = pytest.mark.filterwarnings(
    "ignore:distutils Version classes are deprecated:DeprecationWarning")


@_LOOSE_VERSION
def test_torchviz_make_dot_with_saved_tensors_matches():
    require_tool("torchviz")
    ref = run_with("torch", ("torchviz",), _torchviz_graph)
    assert run_with("hookgrad", ("torchviz",), _torchviz_graph) == ref


def _saved_tensor_attrs(source: str) -> list[str]:
    return sorted(re.findall(r"^(\w+)\s*: \[saved tensors?\]", source, re.M))


@_LOOSE_VERSION
def test_torchviz_show_attrs_lists_the_same_saved_tensors():
    require_tool("torchviz")

    def scenario(torch, torchviz):
        return _torchviz_graph(torch, torchviz, show_attrs=True)

    ref = run_with("torch", ("torchviz",), scenario)
    got = run_with("hookgrad", ("torchviz",), scenario)
    assert _saved_tensor_attrs(got) == _saved_tensor_attrs(ref) != []


# ----------------------------------------------------------------------------------- captum
# captum imports these at load time (torch.futures, torch.nn.parallel, 3-d pooling...).
_CAPTUM_NEEDS = ("futures", "nn.parallel.scatter_gather", "nn.MaxPool3d", "nn.CosineSimilarity")
_CAPTUM_METHODS = {
    "IntegratedGradients": (lambda c, m, x: c.attr.IntegratedGradients(m).attribute(
        x, target=1, n_steps=8), ()),
    "Saliency": (lambda c, m, x: c.attr.Saliency(m).attribute(x, target=0), ()),
    "InputXGradient": (lambda c, m, x: c.attr.InputXGradient(m).attribute(x, target=0), ()),
    "GuidedBackprop": (lambda c, m, x: c.attr.GuidedBackprop(m).attribute(x, target=0), ()),
    "DeepLift": (lambda c, m, x: c.attr.DeepLift(m).attribute(x, target=0),
                 ("nn.DataParallel", "nn.parallel.DistributedDataParallel")),
    "LayerGradCam": (lambda c, m, x: c.attr.LayerGradCam(m, m[0]).attribute(x, target=1), ()),
    "LayerConductance": (lambda c, m, x: c.attr.LayerConductance(m, m[0]).attribute(
        x, target=1, n_steps=8), ()),
    "LayerActivation": (lambda c, m, x: c.attr.LayerActivation(m, m[1]).attribute(x), ()),
    "LayerIntegratedGradients": (lambda c, m, x: c.attr.LayerIntegratedGradients(
        m, m[0]).attribute(x, target=1, n_steps=8), ()),
    "Occlusion": (lambda c, m, x: c.attr.Occlusion(m).attribute(
        x, target=0, sliding_window_shapes=(1, 2, 2)), ("Future", "nn.functional.pad")),
}


@pytest.mark.parametrize("method", sorted(_CAPTUM_METHODS))
def test_captum_attributions_match(method):
    require_tool("captum")
    fn, needs = _CAPTUM_METHODS[method]
    require_hookgrad(*_CAPTUM_NEEDS, *needs)

    def scenario(torch, captum, _attr):
        nn = torch.nn
        m = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 2))
        set_weights(torch, m)
        return fn(captum, m, array(torch, (2, 1, 6, 6))).detach().numpy()

    tools = ("captum", "captum.attr")
    with pytest.warns(UserWarning) if method in _WARNS else _nullcontext():
        ref = run_with("torch", tools, scenario)
    with pytest.warns(UserWarning) if method in _WARNS else _nullcontext():
        got = run_with("hookgrad", tools, scenario)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


_WARNS = {"Saliency", "InputXGradient", "GuidedBackprop", "DeepLift"}


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


# ---------------------------------------------------------------------------- grad-cam
_CAMS = ("GradCAM", "GradCAMPlusPlus", "XGradCAM", "EigenCAM", "HiResCAM", "LayerCAM",
         "EigenGradCAM", "GradCAMElementWise", "AblationCAM", "ScoreCAM")


@pytest.mark.parametrize("cam_name", _CAMS)
def test_grad_cam_maps_match(cam_name):
    require_tool("pytorch_grad_cam")
    if cam_name == "ScoreCAM":
        require_hookgrad("nn.UpsamplingBilinear2d")

    def scenario(torch, gc, targets_mod, _ttach):
        nn = torch.nn
        m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 5, 3, padding=1),
                          nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(5, 3))
        set_weights(torch, m)
        m.eval()
        targets = [targets_mod.ClassifierOutputTarget(1), targets_mod.ClassifierOutputTarget(2)]
        with getattr(gc, cam_name)(model=m, target_layers=[m[2]]) as cam:
            return cam(input_tensor=array(torch, (2, 3, 8, 8)), targets=targets)

    saved = stub_torchvision()
    try:
        tools = ("pytorch_grad_cam", "pytorch_grad_cam.utils.model_targets", "ttach")
        ref = run_with("torch", tools, scenario)
        got = run_with("hookgrad", tools, scenario)
    finally:
        restore_torchvision(saved)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


# ------------------------------------------------- FLOP counters and summaries (pure Python)
def _small_convnet(torch):
    nn = torch.nn
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
    set_weights(torch, m)
    return m


def _thop(torch, thop):
    macs, params = thop.profile(_small_convnet(torch), inputs=(array(torch, (2, 3, 8, 8)),),
                                verbose=False)
    return float(macs), float(params)


def _ptflops(torch, ptflops):
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        return ptflops.get_model_complexity_info(_small_convnet(torch), (3, 8, 8),
                                                 as_strings=False, print_per_layer_stat=False,
                                                 backend="pytorch")


def _torchsummary(torch, torchsummary):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        torchsummary.summary(_small_convnet(torch), (3, 8, 8), device="cpu")
    return buf.getvalue()


def _torchscan(torch, torchscan):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        torchscan.summary(_small_convnet(torch), (3, 8, 8))
    return buf.getvalue()


# tool -> (scenario, hookgrad names it needs at import time that other work streams add)
_COUNTERS = {
    "thop": (_thop, ("nn.utils.rnn",)),
    "ptflops": (_ptflops, ("nn.Conv3d", "nn.Upsample")),
    "torchsummary": (_torchsummary, ()),
    "torchscan": (_torchscan, ("nn.TransformerDecoderLayer",)),  # uses FlopCounterMode inside
}


@_LOOSE_VERSION
@pytest.mark.parametrize("tool", sorted(_COUNTERS))
def test_flop_counters_and_summaries_match(tool):
    require_tool(tool)
    scenario, needs = _COUNTERS[tool]
    require_hookgrad(*needs)
    ref = run_with("torch", (tool,), scenario)
    assert run_with("hookgrad", (tool,), scenario) == ref
