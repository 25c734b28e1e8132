"""Subcommands of the ``bodega`` command line, one module each (see :mod:`bodega.cli`)."""
