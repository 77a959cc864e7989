"""The camera's pictures as evidence: kept by hash beside the journal, covered by its chain.

:mod:`~table_controller.evidence.store` keeps the JPEGs by their SHA-256 and logs what
retention deletes; :mod:`~table_controller.evidence.keeper` encodes and writes them off the
card path and tells the controller, which journals an ``evidence`` event with the hashes;
:mod:`~table_controller.evidence.bundle` makes and verifies a round's dispute bundle.
"""
