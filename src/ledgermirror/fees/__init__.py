"""Fee estimates for HAPI transactions (HIP-1261 "simple fees", HIP-1313 high-volume pricing).

``transaction`` parses a posted ``Transaction``; ``usage`` counts what each transaction type is charged for;
``schedule`` holds the simple fee schedule (decoded from file 0.0.113, or the shipped ``default-schedule.json``);
``curve`` is the high-volume multiplier; ``calculator`` turns a schedule and a usage into an itemized
estimate; ``store`` reads the schedule and the state facts (custom fees of tokens and topics) from the
database. Nothing here speaks HTTP.
"""
