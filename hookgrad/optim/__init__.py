"""Optimizers and learning-rate schedulers. Mirrors: ``torch.optim``.

The global step hooks live in the submodule, as in torch:
``hookgrad.optim.optimizer.register_optimizer_step_pre_hook`` /
``register_optimizer_step_post_hook`` (not re-exported here).
"""

from __future__ import annotations

from hookgrad.optim import lr_scheduler
from hookgrad.optim import lr_scheduler_more  # noqa: F401  (publishes more schedulers: census)
from hookgrad.optim import swa_utils  # noqa: F401  (issue 21: Lightning imports it)
from hookgrad.optim import lr_scheduler_cyclic  # noqa: F401  (publishes CyclicLR)
from hookgrad.optim.adagrad import Adagrad
from hookgrad.optim.adam import Adam
from hookgrad.optim.adamw import AdamW
from hookgrad.optim.optimizer import Optimizer
from hookgrad.optim.rmsprop import RMSprop
from hookgrad.optim.sgd import SGD
from hookgrad.optim.adadelta import Adadelta
from hookgrad.optim.adamax import Adamax
from hookgrad.optim.lbfgs import LBFGS
from hookgrad.optim.nadam import NAdam
from hookgrad.optim.radam import RAdam
from hookgrad.optim.asgd import ASGD
from hookgrad.optim.rprop import Rprop
from hookgrad.optim._adafactor import Adafactor  # noqa: E402  (census)
from hookgrad.optim._muon import Muon  # noqa: E402  (census)
# PyTorch defines both in private files but names them torch.optim (pickles and reprs say so)
Adafactor.__module__ = Muon.__module__ = __name__
from hookgrad.optim._stateless import swap_in_optimizer_params_and_state  # noqa: E402

__all__ = [
    "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler",
    "Adadelta", "Adamax", "LBFGS", "NAdam", "RAdam", "ASGD", "Rprop", "Adafactor", "Muon",
    "swap_in_optimizer_params_and_state"
]

# PyTorch's ``__all__`` also lists these
__all__ += ["SparseAdam", "swa_utils"]
