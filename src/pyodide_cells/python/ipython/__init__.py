"""The guide's stand-in for IPython in the browser: ``IPython.display`` only.

The worker installs this folder as the ``IPython`` package (Pyodide has no
IPython, and the whole of it would be megabytes for a few classes), so that
``from IPython.display import display, HTML, Markdown`` works in a cell as
in Jupyter. ``get_ipython()`` says there is no IPython shell.

``IPython.display`` is the module, as in IPython: ``import IPython.display``,
``from IPython import display`` and ``from IPython.display import display``
all work.
"""

from . import display


def get_ipython() -> None:
    """None: cells here run in the guide's runner, not in an IPython shell."""
    return None


__all__ = ["display", "get_ipython"]  # display: the module
