"""`python -m factstream` runs the factstream CLI."""

from factstream.cli import main

if __name__ == "__main__":  # the embedding process (spawn) imports this module too
    main()
