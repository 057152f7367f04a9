"""One module per CLI command; agent/cli.py parses arguments and calls run()."""
