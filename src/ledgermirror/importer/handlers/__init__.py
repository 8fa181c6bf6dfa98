"""From record items to rows of the mirror schema: see ``base.py`` (Item, Batch, write_batch, rows_of_file),
``common.py`` (the rows of every item), ``registry.py`` (which handler for which transaction)."""

from ledgermirror.importer.handlers.base import Batch, Handler, Item, item_of, rows_of_file, write_batch

__all__ = ["Batch", "Handler", "Item", "item_of", "rows_of_file", "write_batch"]
