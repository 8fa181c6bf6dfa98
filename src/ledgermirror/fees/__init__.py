"""Fee estimates for HAPI transactions (HIP-1261 "simple fees", HIP-1313 high-volume pricing).

``transaction`` parses a posted ``Transaction``; ``usage`` counts what each transaction type is charged for;
``schedule`` holds the simple fee schedule (decoded from file 0.0.113, or the shipped ``default-schedule.json``);
``curve`` is the high-volume multiplier; ``calculator`` turns a schedule and a usage into an itemized
estimate; ``notes`` words the caveats of the described form. Nothing here speaks HTTP or reads the database: the
route (the network family of ``api/resources``) reads the schedule file and the state facts (custom fees of
tokens and topics) and hands them in.
"""
