"""What both runtimes share: the Spark session and cluster set-up, authenticated channels between processes,
failure and log transport, metrics and progress, senders of edges, and the driver-side collections.
"""
