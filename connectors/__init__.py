"""Connectors to real systems: databases and message logs.

One module per system, each offering Jet's Core processors and its Pipeline sources and sinks:

- :mod:`connectors.jdbc`: any DB-API 2.0 driver (batch source, batched and exactly-once sinks);
- :mod:`connectors.cdc`: change data capture from PostgreSQL (extra ``postgres``: psycopg);
- :mod:`connectors.kafka`: Kafka through confluent-kafka (extra ``kafka``).

Importing this package imports no client library: a module imports its client when a connector is used, and
a missing client is an ``ImportError`` that names the extra to install.
"""
