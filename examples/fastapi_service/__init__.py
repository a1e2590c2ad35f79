"""A simulated inference service using all of infersight.serving; see README.md."""
