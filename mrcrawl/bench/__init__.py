"""Benchmarks that pick between implementations on measured figures.

- corpus.py: generated news article pages in five languages and five site
  layouts, each with the main text it must yield.
- extraction.py: `python -m mrcrawl.bench.extraction` scores main-text
  extractors on that corpus (precision, recall, F1, pages per second).
"""
