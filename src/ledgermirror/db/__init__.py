"""PostgreSQL: the embedded server, migrations, roles, connections, the schema model, the one SQL composer and
the writer, plus the statements the importer, the errata and the running values need."""
