"""Exception types and PyTorch's weights-only error texts.

A malformed file raises the exception type PyTorch raises for the same fault (`refuse`): a
``RuntimeError`` for what its zip reader refuses (corrupt, truncated or encrypted archives,
missing records), ``EOFError`` for an empty file, and for a broken pickle the type its
unpickler fails with (``pickle.UnpicklingError``, ``KeyError``, ``struct.error``, ...), so
``except`` clauses written for PyTorch catch hookgrad's errors too. The message starts with
"hookgrad.load refused the file:" and says what is wrong. A global that the allowlist refuses
raises a plain ``pickle.UnpicklingError`` whose text is PyTorch's, hint included.
"""

from __future__ import annotations

import pickle
import re

from hookgrad.utils._bounded_read import Malformed  # the bounded reader's "file is wrong"

__all__ = ["Malformed", "refuse", "UNSAFE_MESSAGE", "weights_only_message"]


def refuse(reason: str, kind: type = RuntimeError) -> Exception:
    """The error `hookgrad.load` raises for a malformed file: PyTorch's type `kind` for the
    fault, with `reason` in its text."""
    text = (f"hookgrad.load refused the file: {reason}. hookgrad.load reads PyTorch checkpoints "
            "(zip or legacy format) and hookgrad archives, and never runs code from them unless "
            "weights_only=False.")
    for cls in kind.__mro__:  # a type whose constructor wants more (UnicodeDecodeError): a base
        try:
            return cls(text)
        except TypeError:
            continue
    return RuntimeError(text)  # pragma: no cover - every exception type has Exception above


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
