"""Stage 2, page: reading one fetched page.

- urls.py: URL parsing, resolution and canonical form, and the crawl's scope
  (UrlFilter);
- domains.py: a host's registered (pay-level) domain, from the public
  suffix list tldextract ships;
- traps.py: the trap guards, which linked URLs look like a crawler trap by
  their shape (length, repeated path segments, query parameters);
- charset.py: which charset decodes a page, and decode_page, the one function
  that decodes it; charset_labels.py reads the charsets a page declares, and
  charset_detection.py guesses one for a page that declares none;
- html.py: the page's text parsed into an lxml tree, whatever it holds;
- links.py: the page's outlinks, resolved as a browser resolves them;
- robots_directives.py: what the page lets the crawler do with it (meta
  robots, X-Robots-Tag);
- change.py: what the revisit policy reads of the page: its change signature,
  and whether it is a hub;
- outlinks.py: what the Parser makes of one doc record: its out record, read
  in the one parse of the page a crawl makes;
- index_fields.py: what the index holds of a page (headline, metadata, main
  text), read there, and whether the index already has the page as it is;
- metadata.py: what the page says about itself: headline, keywords,
  description, publication date;
- maintext.py: its main text, the article without the site's boilerplate;
- announce.py: what a feed or a sitemap announces (its entries: URLs,
  dates, titles, languages), and the feeds a page names;
- entries.py: which of a feed's or sitemap's entries the crawl follows.

Imports: store (the record schema) and config.  Never mrjob.
"""
