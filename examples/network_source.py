"""The network source of Jet 4.0's "Custom Sources and Sinks" tutorial, steps 16-19: an unbounded source that
reads lines from TCP clients.

- **Step 16, unbounded** (:func:`build_network_source`): ``SourceBuilder.stream``; ``create_fn`` opens a TCP
  server on port 11000 and logs ``Waiting for connection on port 11000 ...``; ``fill_buffer_fn`` adds up to
  128 lines that are ready (none when nothing arrived: the job keeps running) and closes the buffer when the
  client disconnects, which completes that source processor; ``destroy_fn`` closes the sockets.
- **Step 17, timestamps** (``timestamped=True``): ``SourceBuilder.timestamped_stream``; each line starts with
  its timestamp in milliseconds (``1583310272413,0.185707,...``, the format ``examples/cpu_log_sink.py``
  writes), which drives the watermarks (``allowed_lag``, default 0).
- **Step 18, parallelism** (``parallelism=2``): ``.distributed(2)``: two processors per member, processor ``g``
  (global index) listens on ``base_port + g``: 11000, 11001, ... with one member.
- **Step 19, fault tolerance** (``fault_tolerant=True``): ``create_snapshot_fn`` saves how many lines the
  processor has emitted, ``restore_snapshot_fn`` picks its own count out of every processor's saved counts (a
  restarted processor cannot rewind its client's connection, so it counts on from there; Jet passes every
  processor's state to every processor). :func:`build_sequence_source` is the tutorial's own step-19 example,
  the fault-tolerant integer sequence.

One deliberate difference from the Java: ``create_fn`` only opens the server socket, and the first
``fill_buffer_fn`` calls accept the client without blocking. A ``create_fn`` blocked in ``accept()`` could not be
cancelled (``destroy_fn`` only runs once ``create_fn`` returned), so a job cancelled before its client
connected would leave a thread and a listening socket behind.

Run it (a stream job: it runs until Ctrl-C, ``--seconds``, or until every client disconnected; it prints each
line as the live list sink delivers it to the driver), then feed it from another terminal::

    python examples/network_source.py --seconds 60 [--timestamped] [--parallelism 2] [--port 11000]
    cat data.csv | nc 127.0.0.1 11000
"""

from __future__ import annotations

import argparse
import codecs
import socket
import sys
import time

from dag import DAG
from edges import between
from processors import SourceBuilder, write_list_p
from processors.io.text_streams import LineSplitter

BASE_PORT = 11000
CHUNK = 128
RESULT_LIST = "network-lines"


class NetworkContext:
    """The state of one source processor: its server socket, then the accepted client's connection."""

    def __init__(self, ctx, base_port: int):
        self.port = base_port + ctx.global_processor_index
        self.logger = ctx.logger
        self.server = socket.create_server(("127.0.0.1", self.port))
        self.server.setblocking(False)
        self.client: socket.socket | None = None
        self.lines = LineSplitter()
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.ready: list[str] = []
        self.ended = False
        self.emitted = 0
        self.logger.info("Waiting for connection on port %d ...", self.port)

    def _accept(self) -> bool:
        try:
            self.client, _ = self.server.accept()
        except (BlockingIOError, InterruptedError):
            return False
        self.client.setblocking(False)
        self.logger.info("Data source connected on port %d.", self.port)
        return True

    def read_lines(self, limit: int) -> list[str] | None:
        """Up to ``limit`` complete lines that are ready; ``None`` once the client disconnected and all its
        lines were taken."""
        if self.client is None and not self._accept():
            return []
        while len(self.ready) < limit and not self.ended:
            try:
                data = self.client.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                break
            if not data:  # the client disconnected; like Java's readLine(), a last unterminated line counts
                self.ended = True
                rest = self.lines.feed(self.decoder.decode(b"", final=True))
                self.ready += rest + (self.lines.feed("\n") if self.lines.pending else [])
            else:
                self.ready += self.lines.feed(self.decoder.decode(data))
        if self.ended and not self.ready:
            return None
        taken, self.ready = self.ready[:limit], self.ready[limit:]
        self.emitted += len(taken)
        return taken

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        self.server.close()


def _fill(context: NetworkContext, buf) -> None:
    lines = context.read_lines(CHUNK)
    if lines is None:
        buf.close()
        return
    for line in lines:
        buf.add(line)


def _fill_timestamped(context: NetworkContext, buf) -> None:
    lines = context.read_lines(CHUNK)
    if lines is None:
        buf.close()
        return
    for line in lines:
        buf.add(line, int(line[:line.index(",")]))


def _restore_count(context: NetworkContext, saved: list) -> None:
    """Each saved state is ``(port, emitted)``; keep the one of this processor's port."""
    for port, emitted in saved:
        if port == context.port:
            context.emitted = emitted


def build_network_source(base_port: int = BASE_PORT, *, timestamped: bool = False, parallelism: int | None = None,
                         fault_tolerant: bool = False, allowed_lag: int = 0):
    """The tutorial's ``http-source`` (steps 16-19, see the module docstring).

    >>> build_network_source(timestamped=True, parallelism=2).name
    'http-source'
    """
    def create(ctx):
        return NetworkContext(ctx, base_port)

    if timestamped:
        builder = SourceBuilder.timestamped_stream("http-source", create).allowed_lag(allowed_lag)
        builder.fill_buffer_fn(_fill_timestamped)
    else:
        builder = SourceBuilder.stream("http-source", create).fill_buffer_fn(_fill)
    builder.destroy_fn(NetworkContext.close)
    if parallelism is not None:
        builder.distributed(parallelism)
    if fault_tolerant:
        builder.create_snapshot_fn(lambda context: (context.port, context.emitted))
        builder.restore_snapshot_fn(_restore_count)
    return builder.build()


def _fill_sequence(num_to_emit: list, buf) -> None:
    buf.add(num_to_emit[0])
    num_to_emit[0] += 1


def _restore_sequence(num_to_emit: list, saved: list) -> None:
    num_to_emit[0] = saved[0]


def build_sequence_source():
    """The tutorial's step-19 ``fault-tolerant-source``: 0, 1, 2, ... resuming from its snapshot."""
    return (
        SourceBuilder.stream("fault-tolerant-source", lambda ctx: [0])
        .fill_buffer_fn(_fill_sequence)
        .create_snapshot_fn(lambda num_to_emit: num_to_emit[0])
        .restore_snapshot_fn(_restore_sequence)
        .build()
    )


def build_dag(source=None, sink=None) -> DAG:
    """``http-source -> sink``; the sink defaults to ``write_list_p("network-lines")`` (``engine.get_list``,
    filled live while the job runs)."""
    dag = DAG()
    source = source if source is not None else build_network_source()
    source_vertex = dag.new_vertex(source.name, source)
    sink_vertex = dag.new_vertex("sink", sink if sink is not None else write_list_p(RESULT_LIST))
    dag.edge(between(source_vertex, sink_vertex))
    return dag


def job(port: int = BASE_PORT, timestamped: bool = False, parallelism: int | None = None):
    """``jetspark run examples/network_source.py [--port N] [--timestamped] [--parallelism L]``: the DAG (a
    stream job; ``jetspark run`` prints the lines as they arrive). Drawing it opens no port: the source listens
    only once the job runs."""
    from jetspark_cli.spec import JobSpec

    source = build_network_source(port, timestamped=timestamped, parallelism=parallelism)
    return JobSpec(build_dag(source), name="network-source")


def main(argv: list[str]) -> int:
    from dag import Engine

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=BASE_PORT, help="base port (processor g listens on port + g)")
    parser.add_argument("--timestamped", action="store_true", help="lines start with a timestamp (step 17)")
    parser.add_argument("--parallelism", type=int, default=None, help="source processors per member (step 18)")
    parser.add_argument("--seconds", type=float, default=None, help="cancel the job after this many seconds")
    args = parser.parse_args(argv)
    source = build_network_source(args.port, timestamped=args.timestamped, parallelism=args.parallelism)
    with Engine() as engine:
        dag = build_dag(source)
        count = engine.plan(dag).vertices[source.name].total_parallelism
        ports = ", ".join(str(args.port + g) for g in range(count))
        print(f"Waiting for connection on port(s) {ports} ...", flush=True)
        lines = engine.get_list(RESULT_LIST)
        lines.clear()
        job = engine.new_job(dag)
        deadline = None if args.seconds is None else time.monotonic() + args.seconds
        shown = 0
        try:
            while not job.status.is_terminal and (deadline is None or time.monotonic() < deadline):
                time.sleep(0.1)
                for line in lines[shown:]:  # the live list sink fills the driver's list while the job runs
                    print(line, flush=True)
                shown = len(lines)
        except KeyboardInterrupt:
            pass
        finally:
            job.cancel()
        for line in lines[shown:]:
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
