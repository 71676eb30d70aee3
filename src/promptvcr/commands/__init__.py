"""Subcommands of the ``promptvcr`` command line; see :mod:`promptvcr.cli`."""
