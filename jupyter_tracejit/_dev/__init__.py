"""Development harness shared by tests/browser and benchmarks; needs the test extras; not shipped in the wheel."""
