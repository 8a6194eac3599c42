"""Event time and windows: timestamps and watermark policies, ``insert_watermarks_p``, window definitions and
the sliding, tumbling and session window processors (``jet-streaming.md``).
"""
