"""From record items to rows of the mirror schema: ``item.py`` (an item parsed), ``batch.py`` (the rows
gathered), ``context.py`` (what handlers hand to each other), ``file_rows.py`` (walking a file),
``batch_writer.py`` (writing a batch), ``common.py`` (the rows of every item), ``registry.py`` (which handler
for which transaction)."""
