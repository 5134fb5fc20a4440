"""The old name of cli/runtime.py, kept for its one importer left: cli/fetch.py (the bridgeembed-data dispatcher,
being changed by other work today) imports `dispatch` from here. Delete this file once it imports from
bridgeembed.cli.runtime."""

from bridgeembed.cli.runtime import dispatch  # noqa: F401
