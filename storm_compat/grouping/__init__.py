"""Custom stream groupings (Storm's ``org.apache.storm.grouping``).

>>> from storm_compat.grouping import CustomStreamGrouping
>>> sorted(CustomStreamGrouping.__abstractmethods__)
['chooseTasks', 'prepare']
"""

from storm_compat.grouping._custom import CustomStreamGrouping

__all__ = ["CustomStreamGrouping"]
