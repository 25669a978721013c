"""``torch.fx.experimental``: the parts libraries import at load time (see `proxy_tensor`).

Mirrors: ``torch.fx.experimental``.
"""
