"""Renderers of the report document (Markdown, HTML, SVG, the failure view) and rerender under the current rules."""
