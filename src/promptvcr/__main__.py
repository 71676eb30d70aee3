"""`python -m promptvcr`: the command line."""

from .cli import main

raise SystemExit(main())
