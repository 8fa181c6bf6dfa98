"""The API's routes by family (one subpackage each), and what every family shares: OpenAPI schemas
(``schemas.py``), the EVM-address lookup (``evm_lookup.py``); ``health.py`` holds the probes."""
