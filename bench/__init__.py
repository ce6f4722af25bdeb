"""Performance benchmarks: `make bench` (bench.run) writes docs/benchmarks.md."""
