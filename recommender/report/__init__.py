"""Reports people look at: self-contained HTML, SVG/PNG plots and Markdown summaries (presentation, not core).

`figures` computes what the charts show from the core's results, `svg` lays them out, `structure` holds a
report's sections, `explain`/`plan`/`check` build the report of each command, and `html`, `markdown` and `png`
turn it into bytes. Jinja (with autoescaping) only places values computed here.
"""
