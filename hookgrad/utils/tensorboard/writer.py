"""``SummaryWriter``: the object training scripts log through.

Mirrors: ``torch.utils.tensorboard.writer`` (``FileWriter``, ``SummaryWriter``). Default run
directory ``runs/<Mon>DD_HH-MM-SS_<host><comment>``, ``add_scalars`` writing one sub-run per
series, ``add_hparams`` a timestamped sub-run, ``purge_step`` restarting a run's steps, and
TensorFlow's exponential default histogram bins are PyTorch's. Summaries that need TorchScript
(``add_graph``), ONNX, video/audio encoders or the projector (``add_embedding``), meshes,
PR curves or custom-scalar layouts raise NotImplementedError.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from hookgrad.utils.tensorboard import summary as _summary

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Event protos appended to one event file in `log_dir` (written asynchronously).

    Mirrors: ``torch.utils.tensorboard.writer.FileWriter``.
    """

    def __init__(self, log_dir: Any, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: Any = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)  # NumPy and tensor steps: protobuf takes only ints
        self.event_writer.add_event(event)

    def add_summary(self, summary: Any, global_step: Any = None,
                    walltime: float | None = None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: Any, walltime: float | None = None) -> None:
        raise NotImplementedError(_UNSUPPORTED.format(what="graphs"))

    def add_onnx_graph(self, graph: Any, walltime: float | None = None) -> None:
        raise NotImplementedError(_UNSUPPORTED.format(what="ONNX graphs"))

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


_UNSUPPORTED = ("hookgrad's SummaryWriter does not log {what} (PyTorch builds them with "
                "TorchScript, ONNX or media encoders hookgrad does not have)")


def _default_bins() -> list[float]:
    """TensorFlow's histogram edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


class SummaryWriter:
    """Writes scalars, histograms, images, text and hyper-parameters for TensorBoard.

    Mirrors: ``torch.utils.tensorboard.SummaryWriter``.
    """

    def __init__(self, log_dir: Any = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        self.default_bins = _default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The run's writer, made again after `close` (logging after close reopens the run)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard drops the run's events at steps >= purge_step on reading these
                step, self.purge_step = self.purge_step, None
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START)))
        return self.file_writer

    def get_logdir(self) -> Any:
        return self.log_dir

    def add_hparams(self, hparam_dict: Any, metric_dict: Any, hparam_domain_discrete: Any = None,
                    run_name: str | None = None, global_step: Any = None) -> None:
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        protos = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as run:
            for proto in protos:
                run._get_file_writer().add_summary(proto, global_step)
            for key, value in metric_dict.items():
                run.add_scalar(key, value, global_step)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        proto = _summary.scalar(tag, scalar_value, new_style=new_style,
                                double_precision=double_precision)
        self._get_file_writer().add_summary(proto, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: Any = None,
                    walltime: float | None = None) -> None:
        """One sub-run ``<logdir>/<main_tag>_<tag>`` per series, so TensorBoard overlays them."""
        walltime = time.time() if walltime is None else walltime
        base = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, value in tag_scalar_dict.items():
            sub = base + "/" + main_tag.replace("/", "_") + "_" + tag
            if sub not in self.all_writers:
                self.all_writers[sub] = FileWriter(sub, self.max_queue, self.flush_secs,
                                                   self.filename_suffix)
            self.all_writers[sub].add_summary(_summary.scalar(main_tag, value), global_step,
                                              walltime)

    def add_tensor(self, tag: str, tensor: Any, global_step: Any = None,
                   walltime: float | None = None) -> None:
        self._get_file_writer().add_summary(_summary.tensor_proto(tag, tensor), global_step,
                                            walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Any = None,
                      bins: Any = "tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        proto = _summary.histogram(tag, values, bins, max_bins=max_bins)
        self._get_file_writer().add_summary(proto, global_step, walltime)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: int,  # noqa: A002
                          sum: float, sum_squares: float, bucket_limits: Any,  # noqa: A002
                          bucket_counts: Any, global_step: Any = None,
                          walltime: float | None = None) -> None:
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        proto = _summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                       bucket_counts)
        self._get_file_writer().add_summary(proto, global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: Any = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        proto = _summary.image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(proto, global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Any = None,
                   walltime: float | None = None, dataformats: str = "NCHW") -> None:
        proto = _summary.image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(proto, global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: Any = None, close: bool = True,
                   walltime: float | None = None) -> None:
        """A Matplotlib figure (or a list of them, as a batch) rendered to an image."""
        from hookgrad.utils.tensorboard._figure import figure_to_image

        if isinstance(figure, list):
            self.add_images(tag, figure_to_image(figure, close), global_step, walltime,
                            dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_text(self, tag: str, text_string: str, global_step: Any = None,
                 walltime: float | None = None) -> None:
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step,
                                            walltime)

    def _unsupported(what: str) -> Any:  # noqa: N805 - builds methods at class creation
        def method(self: SummaryWriter, *args: Any, **kwargs: Any) -> None:
            raise NotImplementedError(_UNSUPPORTED.format(what=what))
        return method

    add_image_with_boxes = _unsupported("images with bounding boxes")
    add_video = _unsupported("videos")
    add_audio = _unsupported("audio")
    add_graph = _unsupported("model graphs")
    add_onnx_graph = _unsupported("ONNX graphs")
    add_embedding = _unsupported("embeddings for the projector")
    add_pr_curve = _unsupported("PR curves")
    add_pr_curve_raw = _unsupported("PR curves")
    add_custom_scalars = _unsupported("custom scalar layouts")
    add_custom_scalars_multilinechart = _unsupported("custom scalar layouts")
    add_custom_scalars_marginchart = _unsupported("custom scalar layouts")
    add_mesh = _unsupported("meshes")
    del _unsupported

    def flush(self) -> None:
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
