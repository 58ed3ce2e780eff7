"""Demo Django project using ttmemory; also the settings base of the test suite."""
