"""The machinery behind `hookgrad.serialization` (``save`` / ``load``), one job per file.

* `_errors`: the exception types and PyTorch's weights-only error texts;
* `_files`: opening what ``load`` is given (regular files only, bounded streams);
* `_dtypes_map`: PyTorch storage type names <-> hookgrad dtypes ;
* `_rebuild`: hookgrad versions of ``torch._utils._rebuild_*`` and friends;
* `_allowlist`: the weights-only allowlist (defaults and ``add_safe_globals``);
* `_weights_unpickler`: the restricted unpickler (``weights_only=True``);
* `_class_paths`: hookgrad classes <-> ``torch.*`` pickle paths;
* `_full_unpickler`: the unrestricted unpickler (``weights_only=False``);
* `_torch_reader` / `_torch_writer`: PyTorch's zip format;
* `_legacy_torch`: PyTorch's pre-1.6 (non-zip) format, read only;
* `_hookgrad_v2`: hookgrad's own JSON + ``.npy`` archive of earlier versions, read only.
"""
