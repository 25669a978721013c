"""The old home of ``load_url``. Mirrors: ``torch.utils.model_zoo``.

Older training scripts write ``model_zoo.load_url(url)``; it is ``hub.load_state_dict_from_url``.
"""

from hookgrad.hub import load_state_dict_from_url as load_url, tqdm

__all__ = ["load_url", "tqdm"]
