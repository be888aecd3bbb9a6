"""A cell's outputs as the page shows them, made safe: pages/outputs.py."""
from __future__ import annotations

from sitegen.pages.outputs import safe_html


def test_a_page_embedded_from_another_site_is_a_link_to_it():
    """IPython's YouTubeVideo and IFrame showed nothing at all (the red team's finding): a link, never the frame."""
    shown = safe_html('<iframe width="400" height="300" src="https://www.youtube.com/embed/abc" frameborder="0" '
                      'allowfullscreen></iframe>')
    assert shown == '<a href="https://www.youtube.com/embed/abc" rel="noopener noreferrer">https://www.youtube.com/embed/abc</a>'
    assert safe_html('<iframe src="javascript:alert(1)"></iframe><script>x</script>') == ""
