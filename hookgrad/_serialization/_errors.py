"""Exception types and PyTorch's weights-only error texts.

A malformed archive raises `CheckpointError`, which is both a ``pickle.UnpicklingError``
(what ``torch.load(weights_only=True)`` raises for a refused pickle) and a ``RuntimeError``
(what PyTorch's zip reader raises for corrupt, truncated or encrypted archives), so ported code
catching either keeps working. A global that the allowlist refuses raises a plain
``pickle.UnpicklingError`` whose text is PyTorch's, hint included.
"""

from __future__ import annotations

import pickle
import re

from hookgrad.utils._bounded_read import Malformed  # the bounded reader's "file is wrong"

__all__ = ["CheckpointError", "Malformed", "refuse", "UNSAFE_MESSAGE", "weights_only_message"]


class CheckpointError(pickle.UnpicklingError, RuntimeError):
    """A checkpoint that cannot be read: malformed, truncated, corrupted or hostile.

    Mirrors: ``pickle.UnpicklingError`` / the ``RuntimeError`` of ``torch.load``'s zip reader.
    """


def refuse(reason: str) -> CheckpointError:
    """The error `hookgrad.load` raises for a malformed file, with `reason` in its text."""
    return CheckpointError(
        f"hookgrad.load refused the file: {reason}. hookgrad.load reads PyTorch checkpoints "
        "(zip or legacy format) and hookgrad archives, and never runs code from them unless "
        "weights_only=False."
    )


UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source."
)
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
)


def weights_only_message(message: str) -> str:
    """Wrap an error of the restricted unpickler as ``torch.load`` does (same text and hint)."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two "
            "options, \033[1mdo those steps only if you trust the source of the checkpoint"
            f"\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
            "`weights_only=True` please check the recommended steps in the following error "
            "message.\n\tWeightsUnpickler error: " + message + _DOCS_MESSAGE)
    if re.search(r"(\S+) must be (\S+) to load", message):
        return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
    text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if not re.search(r"whose module (\S+) is blocked", message):
        text += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return text + "\n\n" + message + _DOCS_MESSAGE
