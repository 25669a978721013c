"""``_remote_device``: a device on a (possibly remote) worker, parsed from a string.

Mirrors: ``torch.distributed.remote_device``.
"""

from __future__ import annotations

from typing import Any

_PARSE_ERROR = ("Could not parse remote_device: {}. The valid format is '<workername>/<device>' "
                "or 'rank:<rank>/<device>' or '<device>'")


class _remote_device:  # noqa: N801 - PyTorch's name
    """``"<worker>/<device>"``, ``"rank:<r>/<device>"``, ``"<worker>"`` (device cpu) or a
    local ``"<device>"``.

    Example:
        >>> d = _remote_device("rank:0/cpu")
        >>> d.rank(), d.worker_name(), str(d.device())
        (0, None, 'cpu')

    Raises:
        ValueError: A string in none of these forms.
        TypeError: Neither a string nor a device.

    Mirrors: ``torch.distributed._remote_device``.
    """

    def __init__(self, remote_device: Any) -> None:
        from hookgrad._backend import device as Device

        error = ValueError(_PARSE_ERROR.format(remote_device))
        self._worker_name: str | None = None
        self._rank: int | None = None
        if isinstance(remote_device, Device):
            self._device: Any = remote_device
        elif isinstance(remote_device, str):
            fields = remote_device.split("/")
            if len(fields) == 2:
                self._worker_name, self._device = fields
            elif len(fields) == 1 and self._is_valid_local_device(fields[0]):
                self._device = fields[0]
            elif len(fields) == 1:
                self._worker_name, self._device = fields[0], "cpu"
            else:
                raise error
        else:
            raise TypeError(f"Invalid type for remote_device: {type(remote_device)}")
        if self._worker_name is not None and not self._worker_name:
            raise error
        self._device = Device(self._device)
        if self._worker_name is not None:
            parts = self._worker_name.split(":")
            if len(parts) == 2 and parts[0] == "rank" and parts[1].isdigit():
                self._rank, self._worker_name = int(parts[1]), None
            elif len(parts) >= 2:
                raise error

    @staticmethod
    def _is_valid_local_device(device: str) -> bool:
        from hookgrad._backend import device as Device

        try:
            Device(device)
        except Exception:  # noqa: BLE001 - anything unparsable is a worker name
            return False
        return True

    def worker_name(self) -> str | None:
        """Mirrors: ``torch.distributed._remote_device.worker_name``."""
        return self._worker_name

    def rank(self) -> int | None:
        """Mirrors: ``torch.distributed._remote_device.rank``."""
        return self._rank

    def device(self) -> Any:
        """Mirrors: ``torch.distributed._remote_device.device``."""
        return self._device

    def __repr__(self) -> str:
        if self._worker_name is not None:
            return f"{self._worker_name}/{self._device}"
        if self._rank is not None:
            return f"rank:{self._rank}/{self._device}"
        return str(self._device)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _remote_device) and (
            self._worker_name, self._device, self._rank) == (
            other._worker_name, other._device, other._rank)

    def __hash__(self) -> int:
        return hash(self._worker_name) ^ hash(self._device) ^ hash(self._rank)
