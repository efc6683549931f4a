"""heronpy's ``custom_grouping``: ``ICustomGrouping``.

A subclass implements ``prepare(context, component, stream, target_tasks)`` and
``choose_tasks(values) -> [task ids]``. It is the native `heron_core.api.CustomGrouping`, so
``Grouping.custom(instance)`` pickles it into the plan and each emitting task calls
``prepare`` once with its own context, its own (the source) component name, the stream and
the subscribing component's task ids, as Heron's instance does.
"""

from heron_core.api import CustomGrouping

__all__ = ["ICustomGrouping"]


class ICustomGrouping(CustomGrouping):
    """A grouping evaluated by the emitting task (heronpy's interface name).

    >>> class First(ICustomGrouping):
    ...     def prepare(self, context, component, stream, target_tasks):
    ...         self.targets = target_tasks
    ...     def choose_tasks(self, values):
    ...         return [self.targets[0]]
    >>> grouping = First()
    >>> grouping.prepare(None, "word_spout", "default", [4, 5, 6])
    >>> grouping.choose_tasks(["heron"])
    [4]
    """
