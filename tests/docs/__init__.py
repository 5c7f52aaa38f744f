"""The docs' generated sections: tables read from the code (``python -m tests.docs`` rewrites them)."""
