"""Summary protos for each kind of value, as TensorBoard's plugins read them.

Mirrors: ``torch.utils.tensorboard.summary`` (``scalar``, ``histogram``, ``histogram_raw``,
``image``, ``text``, ``tensor_proto``, ``hparams``): the same protos, tags and plugin data, so
tools that build summaries themselves (training frameworks log hyper-parameters with
``hparams``) work unchanged.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from hookgrad._tensor import Tensor
from hookgrad.utils.tensorboard._convert import make_np, scale_factor, to_hwc

__all__ = ["scalar", "tensor_proto", "histogram_raw", "histogram", "make_histogram", "image",
           "make_image", "text", "hparams"]


def scalar(name: str, tensor: Any, collections: Any = None, new_style: bool = False,
           double_precision: bool = False) -> Summary:
    """One number: ``simple_value`` (old style) or a scalars-plugin tensor (``new_style``)."""
    array = make_np(tensor).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given "
                             f"size: {array.size} and {array.ndim} dimensions.")
    value = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=meta)])


# dtype -> (proto dtype, proto field, how the values are listed)
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val", lambda a: a.view(np.uint16).ravel().tolist()),
    "float32": ("DT_FLOAT", "float_val", lambda a: a.ravel().tolist()),
    "float64": ("DT_DOUBLE", "double_val", lambda a: a.ravel().tolist()),
    "int8": ("DT_INT8", "int_val", lambda a: a.ravel().tolist()),
    "uint8": ("DT_UINT8", "int_val", lambda a: a.ravel().tolist()),
    "int16": ("DT_INT16", "int_val", lambda a: a.ravel().tolist()),
    "int32": ("DT_INT32", "int_val", lambda a: a.ravel().tolist()),
    "int64": ("DT_INT64", "int64_val", lambda a: a.ravel().tolist()),
    "bool": ("DT_BOOL", "bool_val", lambda a: a.ravel().tolist()),
}


def tensor_proto(tag: str, tensor: Tensor) -> Summary:
    """A whole tensor (tensor plugin)."""
    if tensor.numel() * tensor.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    array = make_np(tensor)
    if array.dtype.name not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, listed = _TENSOR_FIELDS[array.dtype.name]
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in array.shape])
    proto = TensorProto(dtype=dtype, tensor_shape=shape, **{field: listed(array)})
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def histogram_raw(name: str, min: float, max: float, num: int, sum: float,  # noqa: A002
                  sum_squares: float, bucket_limits: Any, bucket_counts: Any) -> Summary:
    """A histogram whose buckets the caller computed."""
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    """A histogram of `values` over `bins` (edges, a count or a NumPy rule name)."""
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None) -> HistogramProto:
    """The histogram proto: NumPy's counts, merged down to `max_bins`, trimmed to the buckets
    that hold values plus one empty bucket on the left (TensorBoard stores right edges only)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        short = len(counts) % group
        if short:
            counts = np.pad(counts, [[0, group - short]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, group).sum(axis=-1)
        merged = np.empty((counts.size + 1,), limits.dtype)
        merged[:-1], merged[-1] = limits[:-1:group], limits[-1]
        limits = merged
    filled = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(filled, [0, filled[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(),
                          bucket=counts.tolist())


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image (or a grid of a batch) as PNG; floats are read as 0..1, uint8 as 0..255."""
    array = to_hwc(make_np(tensor), dataformats)
    factor = scale_factor(array)
    pixels = (array.astype(np.float32) * factor).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(pixels, rescale=rescale))])


def make_image(pixels: np.ndarray, rescale: float = 1, rois: Any = None,
               labels: Any = None) -> Summary.Image:
    """PNG bytes of an ``H x W x C`` uint8 array (Pillow encodes, as in PyTorch)."""
    if rois is not None:
        raise NotImplementedError("hookgrad: bounding boxes on images (add_image_with_boxes) "
                                  "are not supported")
    from PIL import Image

    height, width, channels = pixels.shape
    picture = Image.fromarray(pixels).resize((int(width * rescale), int(height * rescale)),
                                             Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return Summary.Image(height=height, width=width, colorspace=channels,
                         encoded_image_string=buffer.getvalue())


def text(tag: str, text: str) -> Summary:  # noqa: A002 - PyTorch's parameter name
    """A string for the text plugin (tag gets PyTorch's ``/text_summary`` suffix)."""
    content = TextPluginData(version=0).SerializeToString()
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text",
                                                                  content=content))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta,
                                        tensor=proto)])


def _hparams_summary(tag: str, **content: Any) -> Summary:
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME,
                                                                  content=data))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


# Checked in this order, as PyTorch does: a bool is an int, so it is logged as a number.
_HPARAM_KINDS = [((int, float), "number_value", "DATA_TYPE_FLOAT64"),
                 ((str,), "string_value", "DATA_TYPE_STRING"),
                 ((bool,), "bool_value", "DATA_TYPE_BOOL")]


def hparams(hparam_dict: Any = None, metric_dict: Any = None,
            hparam_domain_discrete: Any = None) -> tuple[Summary, Summary, Summary]:
    """The experiment, session-start and session-end summaries of the hparams plugin."""
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo,
                                                     MetricInfo, MetricName, Status)
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing "
                        "logged.")
    for key, options in domains.items():
        if (key not in hparam_dict or not isinstance(options, list)
                or not all(isinstance(d, type(hparam_dict[key])) for d in options)):
            raise TypeError(f"parameter: hparam_domain_discrete[{key}] should be a list of "
                            f"same type as hparam_dict[{key}].")
    infos, start = [], SessionStartInfo()
    for key, value in hparam_dict.items():
        if value is None:
            continue
        if isinstance(value, Tensor):
            start.hparams[key].number_value = make_np(value)[0]
            infos.append(HParamInfo(name=key, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        kind = next((k for k in _HPARAM_KINDS if isinstance(value, k[0])), None)
        if kind is None:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        _, field, type_name = kind
        setattr(start.hparams[key], field, value)
        domain = None
        if key in domains:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                  for d in domains[key]])
        infos.append(HParamInfo(name=key, type=DataType.Value(type_name),
                                domain_discrete=domain))
    metrics = [MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    experiment = _hparams_summary(metadata.EXPERIMENT_TAG,
                                  experiment=Experiment(hparam_infos=infos, metric_infos=metrics))
    session_start = _hparams_summary(metadata.SESSION_START_INFO_TAG, session_start_info=start)
    end = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    session_end = _hparams_summary(metadata.SESSION_END_INFO_TAG, session_end_info=end)
    return experiment, session_start, session_end
