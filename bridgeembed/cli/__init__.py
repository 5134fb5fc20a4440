"""Command-line tools. Each `main()` turns a `BridgeembedError` into one line on stderr and exit status 2."""
