"""Connectors to real systems: databases and message logs.

Each system offers Jet's Core processors and its Pipeline sources and sinks from one entry module; the
modules behind it hold one topic each:

- :mod:`connectors.jdbc`: any DB-API 2.0 driver (batch source, batched and exactly-once sinks); its
  processors live in ``processors/io`` (``jdbc_io``, ``jdbc_batch_sink``, ``jdbc_two_phase`` and ``dbapi``,
  what the database connectors share: naming a server without its password, telling a lost connection from a
  bad statement, bounded reconnecting), because they need no client library and the Pipeline API's
  ``Sources.jdbc`` builds on them;
- :mod:`connectors.cdc`: change data capture from PostgreSQL (extra ``postgres``: psycopg), with
  :mod:`connectors.cdc_source` (the source's processor), :mod:`connectors.cdc_records` (``ChangeRecord``),
  :mod:`connectors.cdc_sink` (``CdcSinks.map``), :mod:`connectors.pg_replication` (the replication stream)
  and :mod:`connectors.pgoutput` (the decoder of its messages);
- :mod:`connectors.kafka`: Kafka through confluent-kafka (extra ``kafka``), with
  :mod:`connectors.kafka_source`, :mod:`connectors.kafka_sink`, :mod:`connectors.kafka_client` (what both
  share) and :mod:`connectors.kafka_mock` (librdkafka's mock cluster, for tests and examples).

Importing this package imports no client library: a module imports its client when a connector is used, and
a missing client is an ``ImportError`` that names the extra to install.
"""
