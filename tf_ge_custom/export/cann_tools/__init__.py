"""The CANN tools the export drives: the AIR tool, ``atc``, their input shapes, where the tools
are and how they are run."""
