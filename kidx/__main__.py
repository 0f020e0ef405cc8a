"""``python -m kidx`` runs the command line."""

from kidx.cli.app import main

main()
