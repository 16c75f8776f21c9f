"""Checks and verification: a frozen graph judged before anything is written, then run in
a fresh process against the source model."""
