"""heronpy's ``serializer``: ``IHeronSerializer``, ``PythonSerializer``, ``default_serializer``.

heronpy pickles with cloudpickle, which also pickles lambdas and classes by value; this one
pickles as the kernel does (`heron_core.api._pickling`): classes and functions by reference,
those of the topology file by its module name. (cloudpickle is not a dependency here.)

>>> default_serializer.deserialize(default_serializer.serialize({"word": "heron"}))
{'word': 'heron'}
"""

from __future__ import annotations

import abc
import pickle
from typing import Any

from heron_core.api._pickling import dumps

__all__ = ["IHeronSerializer", "PythonSerializer", "default_serializer"]


class IHeronSerializer(abc.ABC):
    """Turns objects into bytes and back."""

    @abc.abstractmethod
    def initialize(self, config: Any) -> None:
        """Prepare with the topology config."""

    @abc.abstractmethod
    def serialize(self, obj: Any) -> bytes:
        """``obj`` as bytes."""

    @abc.abstractmethod
    def deserialize(self, input_str: bytes) -> Any:
        """The object ``input_str`` holds."""


class PythonSerializer(IHeronSerializer):
    """Pickle (highest protocol)."""

    def initialize(self, config: Any = None) -> None:
        """Nothing to prepare."""

    def serialize(self, obj: Any) -> bytes:
        return dumps(obj)

    def deserialize(self, input_str: bytes) -> Any:
        return pickle.loads(input_str)


default_serializer = PythonSerializer()
