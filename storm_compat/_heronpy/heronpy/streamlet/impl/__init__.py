"""How Streamlet stages run: one spout or bolt per stage, over the native API."""
