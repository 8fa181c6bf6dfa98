"""One module per resource: its parameters, plan (SQL), and renderer, kept together."""
