"""The command lines: ``tf-ge-custom export`` and ``tf-ge-custom run-om``."""
