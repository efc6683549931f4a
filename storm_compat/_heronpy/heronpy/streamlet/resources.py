"""``Resources``: the CPU and RAM of each container (heronpy's module path)."""

from __future__ import annotations

__all__ = ["Resources"]


class Resources:
    """CPU cores and RAM bytes per container, for ``Config.set_container_resources``.

    Each setter returns the object, so they chain.

    >>> Resources().set_cpu(2).set_ram_in_mb(512)
    Resource {cpu: 2.0, ram: 536870912}
    """

    def __init__(self) -> None:
        self._cpu = 0.0
        self._ram = 0

    def set_cpu(self, cpu: float) -> Resources:
        """Set the CPU cores (a float)."""
        self._cpu = float(cpu)
        return self

    def set_ram(self, ram: int) -> Resources:
        """Set the RAM in bytes."""
        self._ram = int(ram)
        return self

    def get_cpu(self) -> float:
        """The CPU cores (0.0: not set)."""
        return self._cpu

    def get_ram(self) -> int:
        """The RAM in bytes (0: not set)."""
        return self._ram

    def set_ram_in_mb(self, ram: float) -> Resources:
        """Set the RAM in MiB."""
        return self.set_ram(int(ram * 1024 * 1024))

    def set_ram_in_gb(self, ram: float) -> Resources:
        """Set the RAM in GiB."""
        return self.set_ram_in_mb(ram * 1024)

    def __repr__(self) -> str:
        return f"Resource {{cpu: {self._cpu}, ram: {self._ram}}}"
