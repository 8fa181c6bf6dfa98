"""A deterministic synthetic ledger for demos and benchmarks, bulk-loaded into the mirror schema with COPY.

>>> sorted(PROFILES)
['large', 'medium', 'small']

``await load(conn, "small", seed=1)`` fills a freshly migrated database and returns the rows copied per table;
``await is_loaded(conn)`` tells whether a ledger is already there. Same profile and seed, same rows.
"""

from ledgermirror.dataset.load import DatasetError, is_loaded, load
from ledgermirror.dataset.profiles import PROFILES, Profile, ProfileError

__all__ = ["PROFILES", "DatasetError", "Profile", "ProfileError", "is_loaded", "load"]
