"""A connector's supplier printed (a log line, a debugger, an error about the DAG) names the server it talks to
but never a password: the connection functions and Kafka properties the user gave are kept masked, while they
still connect as given (no server needed here: the suppliers are only built and printed)."""

from __future__ import annotations

import functools
import pickle

import pytest

from connectors.cdc import PostgresCdcSources
from processors.io.dbapi import masked
from connectors.jdbc import read_jdbc_p, write_jdbc_p
from connectors.kafka import stream_kafka_p, write_kafka_p

SECRET = "s3cret-pw"


def _connect(**kwargs):
    return kwargs  # stands for a driver's connect: returns what it was given


KEYWORDS = functools.partial(_connect, host="db", port=5433, dbname="shop", user="jet", password=SECRET)
URL = functools.partial(_connect, f"postgresql://jet:{SECRET}@db:5433/shop")


@pytest.mark.parametrize("connection_fn", [KEYWORDS, URL], ids=["keywords", "url"])
def test_jdbc_suppliers_when_printed_then_server_shown_and_password_not(connection_fn):
    for supplier in (read_jdbc_p(connection_fn, "select 1"), read_jdbc_p(connection_fn, lambda c, n, i: []),
                     write_jdbc_p("insert into t values (%s)", connection_fn)):
        assert SECRET not in repr(supplier), repr(supplier)
    assert repr(read_jdbc_p(connection_fn, "select 1")).count("<connection function to db:5433") == 1


def test_masked_connection_fn_when_called_or_pickled_then_same_as_the_original():
    fn = masked(KEYWORDS)
    assert fn() == KEYWORDS() and masked(fn) is fn
    again = pickle.loads(pickle.dumps(fn))
    assert again() == KEYWORDS() and SECRET not in repr(again)


def test_cdc_source_when_printed_then_password_not_shown():
    source = (PostgresCdcSources.postgres("cdc").set_database_address("db").set_database_user("jet")
              .set_database_password(SECRET).set_database_name("shop").build())
    config = source.supplier._config  # noqa: SLF001 - the built source's configuration
    for text in (repr(source.supplier), repr(config), repr(config.connection_fn())):
        assert SECRET not in text, text


def test_kafka_suppliers_when_printed_then_secret_settings_masked():
    properties = {"bootstrap.servers": "b:9092", "sasl.password": SECRET, "ssl.key.password": SECRET}
    for supplier in (stream_kafka_p(properties, "in"), write_kafka_p(properties, "out")):
        text = repr(supplier)
        assert SECRET not in text and "b:9092" in text, text
