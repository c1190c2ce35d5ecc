"""The data pipeline: snapshot history as Parquet and the Spark jobs over it.

``snapshots`` (the stored rows, pyarrow) and ``collect`` (appending them) never start Spark;
``spark`` (the session), ``datasets`` (checked inputs, atomic outputs), ``history`` (the
transforms) and ``jobs`` (the jobs end to end) do.
"""
