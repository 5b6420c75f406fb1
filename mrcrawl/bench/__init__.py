"""Benchmarks that pick between implementations on measured figures.

- corpus.py: generated news article pages in five languages and nine site
  layouts, each with the main text it must yield.
- extraction.py: `python -m mrcrawl.bench.extraction` scores main-text
  extractors on that corpus (precision, recall, F1, pages per second).
- charsets.py: `python -m mrcrawl.bench.charsets` scores charset detection
  on public corpora of real files in known encodings (accuracy, ms per file).
- web.py: a synthetic web for throughput benchmarks (hosts x pages, uniform
  or Zipf, page size, links, latency), served on loopback by its own process
  so that its CPU is not the crawler's, with a request log and a politeness
  report.
"""
