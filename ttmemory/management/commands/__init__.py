"""The ``ttmemory_<verb>`` management commands: parse, call one service, print."""
