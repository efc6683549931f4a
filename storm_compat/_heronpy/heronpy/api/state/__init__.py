"""heronpy's ``state``: the ``State`` interface and the ``StatefulComponent`` mixin."""
