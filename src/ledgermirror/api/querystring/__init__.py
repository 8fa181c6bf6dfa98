"""The public query-string language (``account.id=gte:0.0.100``, ``limit``, ``order``...).

No SQL and no I/O in here: values are parsed once into typed :class:`Filter` objects.
"""
