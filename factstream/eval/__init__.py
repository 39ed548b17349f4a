"""Evaluations on CLARK-News: retrieval calibration now; the ERASE protocol comes next."""
