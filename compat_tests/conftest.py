"""The idiom topologies under idioms/ are user projects run by `heron`, not test modules."""

collect_ignore = ["idioms"]
