"""Property: merging layers equals a simple model where the later layer wins per key."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from heron_core.config import REGISTRY, Key, Layer, merge_layers
from heron_core.errors import ConfigurationError

_JSON = st.none() | st.booleans() | st.integers() | st.text(max_size=5)


def valid_values(key: Key) -> st.SearchStrategy[Any]:
    """Values ``key`` accepts: only its default where it refuses any other
    (`Key.refused`)."""
    if key.refused:
        return st.just(key.default)
    if key.choices is not None:
        values: st.SearchStrategy[Any] = st.sampled_from(key.choices)
    elif key.type is bool:
        values = st.booleans()
    elif key.type is int:
        low = None if key.minimum is None else int(key.minimum) + key.exclusive_minimum
        high = None if key.maximum is None else int(key.maximum)
        values = st.integers(low, high)
    elif key.type is float:
        values = st.floats(
            key.minimum,
            key.maximum,
            exclude_min=key.exclusive_minimum,
            allow_nan=False,
            allow_infinity=False,
        )
    elif key.type is str:
        values = st.text(max_size=10)
    elif key.type is list:
        values = st.lists(_JSON, max_size=3)
    else:
        values = st.dictionaries(st.text(max_size=5), _JSON, max_size=3)
    return st.none() | values if key.nullable else values


ENTRIES = {
    name: st.tuples(st.sampled_from((name, *key.aliases)), valid_values(key))
    for name, key in REGISTRY.items()
}
layer_values = st.lists(st.sampled_from(sorted(REGISTRY)), unique=True, max_size=5).flatmap(
    lambda chosen: st.fixed_dictionaries({name: ENTRIES[name] for name in chosen})
)
user_values = st.dictionaries(st.sampled_from(["a", "b.c", "storm.x"]), _JSON, max_size=3)


@given(st.lists(st.tuples(layer_values, user_values), max_size=4))
def test_merge_equals_later_layer_wins_model(
    layers: list[tuple[dict[str, tuple[str, Any]], dict[str, Any]]],
) -> None:
    model: dict[str, Any] = {name: key.default for name, key in REGISTRY.items()}
    built = []
    for index, (registered, user) in enumerate(layers):
        values = {spelled: value for spelled, value in registered.values()} | user
        built.append(Layer(f"layer {index}", values))
        model.update({name: value for name, (_, value) in registered.items()})
        model.update(user)
    # the cross-key rules (the registry's table, in its order) decide whether the model is valid
    broken = [
        rule for rule in REGISTRY.orderings if not rule.holds(model[rule.low], model[rule.high])
    ]
    if broken:
        try:
            merge_layers(*built)
        except ConfigurationError as exc:
            assert broken[0].low in str(exc)
        else:
            raise AssertionError(f"{broken} violated but merge_layers accepted it")
        return
    merged = merge_layers(*built)
    assert merged == model
    for name, key in REGISTRY.items():
        assert merged[name] is None or isinstance(merged[name], key.type)
