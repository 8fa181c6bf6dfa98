"""PostgreSQL: the embedded server, migrations, roles, the pool, and the one SQL composer."""
