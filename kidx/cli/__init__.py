"""The command line: a thin typer layer that parses arguments, calls operations and prints."""
