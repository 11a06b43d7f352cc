"""The sandboxed worker: standard-library-only modules that run *inside* the sandbox.

Under bubblewrap the host binds this directory read-only into the sandbox and starts the base
interpreter on :func:`server.main`; under Landlock (``confine.py``) the worker imports it where it is
installed, then confines itself. Nothing here imports refinelab or any third-party package. See
docs/design/sandbox.md for the trust boundaries.
"""
