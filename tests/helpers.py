"""Reading built pages as a browser would see their structure."""
from __future__ import annotations

import math
from html.parser import HTMLParser


class Elements(HTMLParser):
    """Collects elements as (tag, attrs, text) with the text inside each."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.open: list[list] = []
        self.elements: list[tuple[str, dict, str]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag in ("img", "link", "meta", "br", "input", "source", "track", "wbr", "hr", "col", "area"):
            self.elements.append((tag, dict(attrs), ""))
        else:
            self.open.append([tag, dict(attrs), []])

    def handle_endtag(self, tag):
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == tag:
                name, attrs, parts = self.open.pop(i)
                text = "".join(parts)
                self.elements.append((name, attrs, text))
                if self.open:
                    self.open[-1][2].append(text)
                return

    def handle_data(self, data):
        if self.open:
            self.open[-1][2].append(data)

    def find(self, tag, **attrs):
        """Elements of `tag` with these attributes (a class is matched as one of the element's classes)."""
        def has(element, key, value):
            given = element[1].get(key)
            return value in (given or "").split() if key == "class" else given == value
        return [e for e in self.elements if e[0] == tag and all(has(e, k, v) for k, v in attrs.items())]


def numeric_leaves(value, path=""):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield path, float(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from numeric_leaves(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from numeric_leaves(v, f"{path}[{i}]")


def assert_close_tree(ours, reference, tol=1e-12):
    ref = dict(numeric_leaves(reference))
    got = dict(numeric_leaves(ours))
    assert set(ref) <= set(got), f"missing: {sorted(set(ref) - set(got))[:5]}"
    bad = [(k, got[k], ref[k]) for k in ref if not math.isclose(got[k], ref[k], rel_tol=0, abs_tol=tol)]
    assert not bad, f"{len(bad)} values differ, e.g. {bad[:3]}"
    return len(ref)


# A number as printed: 0.5561, -1.2e-05, 3, 0.5561112107719018. The seed's saved outputs were
# printed on another machine, whose BLAS may sum in another order: the last digits of a 16-digit
# float are not theirs to promise (design: the same numbers to 1e-12, identical at 4 decimals).
NUMBER = __import__("re").compile(r"-?\d+\.\d+(?:e[+-]?\d+)?")      # a number with a fraction, as pages print them
PRINTED_NUMBER = __import__("re").compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def same_printout(ours: str, saved: str, tol: float = 1e-12) -> bool:
    """Whether two printed outputs are the same text, numbers compared to `tol` (absolute)."""
    ours_text, saved_text = PRINTED_NUMBER.split(ours.rstrip()), PRINTED_NUMBER.split(saved.rstrip())
    if ours_text != saved_text:
        return False
    return all(a == b or math.isclose(float(a), float(b), rel_tol=0, abs_tol=tol)
               for a, b in zip(PRINTED_NUMBER.findall(ours), PRINTED_NUMBER.findall(saved)))


def shown_within(number: str, text: str, shown: list[float], tol: float = 1e-12) -> bool:
    """Whether a printed number is in `text` as printed, or (given `shown`, every number in it) to `tol`."""
    return number in text or any(abs(float(number) - value) <= tol for value in shown)
