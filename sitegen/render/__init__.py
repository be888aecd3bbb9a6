"""Rendering: Pages and Artifacts into the site's files, in memory: HTML through the templates (render,
converters), computed notebooks, hashed assets and the math font, the search index, and Pages' own files."""
