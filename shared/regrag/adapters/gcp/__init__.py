"""Google Cloud adapters. Each module imports google.* inside functions and constructors, never at import time."""
