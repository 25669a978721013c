"""TensorBoard logging: ``SummaryWriter`` writing event files TensorBoard reads.

Mirrors: ``torch.utils.tensorboard``. As PyTorch's, importing it needs the ``tensorboard``
package (``ModuleNotFoundError`` otherwise, ``ImportError`` below version 1.15); the event files,
tags and summary protos are PyTorch's, so one log directory can hold runs of both libraries.
"""

import tensorboard

from hookgrad.utils.tensorboard._version import too_old

if too_old(getattr(tensorboard, "__version__", None)):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard, too_old

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from hookgrad.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
