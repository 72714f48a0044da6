"""NumPy reference models of the operations' semantics.

The test suite checks kernels against these models, and the documentation's
interactive explorers draw their pictures from them, so the pictures cannot
drift from the behaviour the tests enforce.  Pure NumPy: no compiler, no GPU.
"""
