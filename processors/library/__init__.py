"""Ready processors for computing: stateless (``map_p``, ``filter_p``, ``flat_map_p``... and ``stateless_loops``,
the generated tight loops that run a chain of them), aggregating (``aggregate_p``, ``accumulate_by_key_p``,
``combine_by_key_p``, ``sort_p``...), diagnostic and buffered sinks.
"""
