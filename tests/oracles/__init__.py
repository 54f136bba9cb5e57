"""Slow scalar-loop oracles, written independently of ``dmlops.reference``.

Each one loops over output coordinates in plain Python and follows the DML page's
pseudo-code literally (torchvision's ``expected_fn`` style). They share nothing with
the vectorised reference except the desc classes.
"""
