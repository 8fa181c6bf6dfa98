"""The transaction routes: the transactions list, one transaction by id or hash, and the transaction renderer
and statements every route that embeds transactions shares (an account's transactions, contract actions)."""
