"""`python -m factstream` runs the factstream CLI."""

from factstream.cli import main

main()
