"""The execution kernel: how one processor is run through Jet's lifecycle, engine-free.

The tasklet (:mod:`processors.execution.tasklet`) steps a processor through its states; the staged runner
(:mod:`processors.execution.staged`) feeds it batches; the snapshot steps, barrier alignment and watermark
coalescing are the parts of that lifecycle every runtime (staged, pipelined, ``verify_processor``) shares.
"""
