"""The functional layer: build a desc from arrays, validate it, execute it."""
