"""Performance benchmarks that print pulls per second and ratios side by side (``python -m benchmarks``)."""
