"""The sandboxed worker: standard-library-only modules that run *inside* the sandbox.

The host binds this directory read-only into the sandbox and starts ``python3 -I -S`` on
:func:`server.main`. Nothing here imports refinelab or any third-party package. See
docs/design/sandbox.md for the trust boundaries.
"""
