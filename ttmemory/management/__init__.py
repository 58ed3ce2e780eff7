"""Operator commands (``manage.py ttmemory_<verb>``) and what they share: batch sizes, progress."""
