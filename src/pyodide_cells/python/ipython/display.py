"""``IPython.display`` for the guide's cells: ``display`` and the rich-output classes.

Each class holds text and shows it through the ``_repr_*_`` method the cell
runner (``runner.py``) and Jupyter both read: ``HTML`` as HTML, ``Markdown``
as Markdown (raw HTML in it is shown as text, not run), ``SVG`` as an
image, ``Latex`` and ``Math`` with KaTeX, ``JSON`` as indented text.
``display(obj)`` shows any object below the running cell; with
``display_id=True`` it returns a handle whose ``update`` redraws that output in
place, and ``clear_output`` clears the cell's output. Other names of
IPython's module raise an ImportError that says what is here.

>>> Markdown("**bold**")._repr_markdown_()
'**bold**'
>>> Math(r"\\alpha^2")._repr_latex_()
'$\\\\displaystyle \\\\alpha^2$'
>>> print(JSON({"b": [1, 2]})._repr_mimebundle_()["text/plain"])
{
  "b": [
    1,
    2
  ]
}
"""

from __future__ import annotations

import json
import sys
import uuid
from typing import Any

__all__ = [
    "display",
    "update_display",
    "clear_output",
    "DisplayHandle",
    "DisplayObject",
    "HTML",
    "Markdown",
    "SVG",
    "Latex",
    "Math",
    "JSON",
]


def display(*objs: Any, display_id: str | bool | None = None, **kwargs: Any) -> DisplayHandle | None:
    """Show each object below the running cell (IPython's ``display``).

    ``display_id``: ``True`` for a new id, or a str; the output can then be
    replaced with the returned :class:`DisplayHandle`'s ``update`` (or
    :func:`update_display`), which is how a loop redraws a picture in place.
    Returns the handle when ``display_id`` is given, else None.

    Other keyword arguments IPython takes (``raw``, ``metadata``, ...) are not
    supported here: passing one raises TypeError naming it. Outside the
    guide's runtime each object's ``repr`` is printed.
    """
    if kwargs:
        raise TypeError(
            f"display() here takes objects and display_id= only, not {', '.join(sorted(kwargs))}= "
            "(the guide's runtime is not the whole of IPython)"
        )
    if display_id is True:
        display_id = uuid.uuid4().hex
    elif display_id is False:
        display_id = None
    elif display_id is not None and not isinstance(display_id, str):
        raise TypeError(f"display_id must be True or a str, not {type(display_id).__name__}")
    _show(objs, display_id, update=False)
    return None if display_id is None else DisplayHandle(display_id)


def update_display(obj: Any, *, display_id: str) -> None:
    """Replace the output(s) shown with ``display_id`` by ``obj`` (IPython's ``update_display``).

    An id with nothing shown is ignored, as in Jupyter. Raises TypeError when
    ``display_id`` is not a str.
    """
    if not isinstance(display_id, str):
        raise TypeError(f"update_display() needs display_id as a str, not {type(display_id).__name__}")
    _show((obj,), display_id, update=True)


def clear_output(wait: bool = False) -> None:
    """Clear the running cell's output; ``wait=True`` clears it when the next output arrives
    (IPython's ``clear_output``). Outside the guide's runtime, does nothing."""
    runner = sys.modules.get("pyodide_cells_runner")
    if runner is not None:
        runner.clear_output(wait)


class DisplayHandle:
    """An output that can be shown and replaced: what ``display(obj, display_id=True)`` returns.

    >>> DisplayHandle("loss").display_id
    'loss'
    """

    def __init__(self, display_id: str | None = None) -> None:
        self.display_id = display_id or uuid.uuid4().hex

    def __repr__(self) -> str:
        return f"<DisplayHandle display_id={self.display_id}>"

    def display(self, obj: Any) -> None:
        """Show ``obj`` as a new output with this handle's id."""
        _show((obj,), self.display_id, update=False)

    def update(self, obj: Any) -> None:
        """Replace what this handle's outputs show by ``obj``."""
        _show((obj,), self.display_id, update=True)


def _show(objs: tuple, display_id: str | None, update: bool) -> None:
    runner = sys.modules.get("pyodide_cells_runner")
    show = getattr(runner, "display", None)
    if show is None:
        for obj in objs:
            print(repr(obj))
        return
    show(*objs, display_id=display_id, update=update)


class DisplayObject:
    """Text to show in one rich form. ``data``: the text (str).

    Raises TypeError for anything else, and for IPython's ``url``,
    ``filename`` and ``metadata`` (nothing is read from a file or the network
    here).
    """

    def __init__(self, data: str | None = None, **unsupported: Any) -> None:
        if unsupported:
            raise TypeError(
                f"{type(self).__name__}() here takes the text to show only, not "
                f"{', '.join(sorted(unsupported))}= (the guide's runtime reads no files or URLs)"
            )
        if data is not None and not isinstance(data, str):
            raise TypeError(f"{type(self).__name__}() takes the text to show as a str, not {type(data).__name__}")
        self.data = data or ""

    def __repr__(self) -> str:
        short = self.data if len(self.data) <= 60 else self.data[:57] + "..."
        return f"<{type(self).__name__} {short!r}>"


class HTML(DisplayObject):
    """HTML, shown as the page's HTML (as Jupyter does: only put HTML you trust in it)."""

    def _repr_html_(self) -> str:
        return self.data


class Markdown(DisplayObject):
    """Markdown, rendered in the page; raw HTML in it is shown as text."""

    def _repr_markdown_(self) -> str:
        return self.data


class SVG(DisplayObject):
    """An SVG image, from its markup."""

    def _repr_svg_(self) -> str:
        return self.data


class Latex(DisplayObject):
    """LaTeX, with its own delimiters (``$...$``, ``$$...$$``), rendered with KaTeX."""

    def _repr_latex_(self) -> str:
        return self.data


class Math(DisplayObject):
    """One display equation, without delimiters: ``Math(r"e^{i\\pi} + 1 = 0")``."""

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.data.strip().strip('$')}$"


class JSON:
    """A JSON-able value (a dict or a list, or JSON text, which is read first), shown as indented JSON.

    Raises TypeError or ValueError, naming the problem, when ``data`` cannot be
    written as JSON (or, given as text, is not JSON).
    """

    def __init__(self, data: Any = None, expanded: bool = False) -> None:
        if isinstance(data, str):  # as IPython: a string is JSON text
            try:
                data = json.loads(data)
            except ValueError as exc:
                raise ValueError(f"JSON() was given text that is not JSON: {exc}") from None
        self.data = data
        try:
            self.text = json.dumps(data, indent=2, ensure_ascii=False, default=_not_json)
        except TypeError as exc:  # a key that is not a string, a number, a bool or None
            raise TypeError(f"JSON() cannot show this value: {exc}") from None
        except (ValueError, RecursionError) as exc:  # data that contains itself, or nests too deep
            raise ValueError(f"JSON() cannot show this value: {str(exc) or type(exc).__name__}") from None

    def _repr_mimebundle_(self) -> dict[str, str]:
        return {"text/plain": self.text}

    def __repr__(self) -> str:
        return self.text


def _not_json(value: Any) -> Any:
    raise TypeError(f"JSON() can show dicts, lists, strings, numbers, booleans and None, not {type(value).__name__}")


# IPython.display's other public names: importing one says what is here (any other name is
# an AttributeError, as for any module: tools probe modules with getattr).
ELSEWHERE = frozenset(
    {
        "Audio",
        "Code",
        "FileLink",
        "FileLinks",
        "GeoJSON",
        "IFrame",
        "Image",
        "Javascript",
        "Pretty",
        "ProgressBar",
        "ScribdDocument",
        "TextDisplayObject",
        "Video",
        "VimeoVideo",
        "YouTubeVideo",
        "display_html",
        "display_javascript",
        "display_jpeg",
        "display_json",
        "display_latex",
        "display_markdown",
        "display_pdf",
        "display_png",
        "display_pretty",
        "display_svg",
        "publish_display_data",
        "set_matplotlib_close",
        "set_matplotlib_formats",
    }
)


def __getattr__(name: str) -> Any:
    if name in ELSEWHERE:
        raise ImportError(
            f"IPython.display here has {', '.join(__all__)}; not {name} (the guide's runtime provides this part of IPython only)"
        )
    raise AttributeError(f"module 'IPython.display' has no attribute {name!r}")
