import os
import sys

# The oracle and helpers beside the tests.
sys.path.insert(0, os.path.dirname(__file__))
