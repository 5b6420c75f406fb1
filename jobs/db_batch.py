"""Crawl db, step 1, DbBatch: what a layer tells the db, one update per URL
and one claim per payload digest and per content signature.

Map: each frontier entry -> the URL was requested on this layer; each doc
record -> how its request ended (for the final URL of a same-host redirect
too), and the payload digests (and content signature) it fetched or ended
(frontier/dedup.py); each out record -> what the Parser judged of the page,
the content signature it showed, and a sighting of each outlink on the next
layer, and, for a page, a link update of each outlink for the link store
(frontier/links.py).  An update's key is "<partition> <url>", a claim's
"#<digest partition> <digest or signature>" and a link update's
"@<partition> <target url>", so the batch sorts by the db's partitions.
Combine and reduce: fold a URL's updates into one (the earliest sighting,
the latest fetch), a digest's claims into one, and a target's link updates
into one (each source once).
"""
from mrcrawl.frontier.crawldb import batch_key, claim_key, is_claim_key, is_signature_key, url_of_batch_key
from mrcrawl.frontier.db_update import fetch_part, fold, updates_from_doc, updates_from_entry, updates_from_out
from mrcrawl.frontier.dedup import claims_from_doc, claims_from_out, fold_claims
from mrcrawl.frontier.links import fold_links, is_link_key, link_key, link_updates_from_out
from mrcrawl.mr.job import CrawlJob, JobCounter
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRDbBatch(CrawlJob):
    STEP = "dbbatch"
    URLS = JobCounter(STEP, "urls")  # URL updates in the batch
    DIGESTS = JobCounter(STEP, "digests")  # payload digest claims in the batch
    SIGNATURES = JobCounter(STEP, "signatures")  # content signature claims in the batch
    LINKS = JobCounter(STEP, "links")  # (source, target) pairs in the batch's link updates
    SUMMARY = ("{URLS} URLs, {DIGESTS} payload digests, {SIGNATURES} content signatures "
               "and {LINKS} links in the batch")

    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper(self, url, record):
        if "rank" in record:
            updates = updates_from_entry(url, record, self.layer)
        elif "outlinks" in record:
            updates = updates_from_out(record, url)
            for signature, claim in claims_from_out(record, url):
                yield claim_key(signature, self.partitions), claim
            for target, links in link_updates_from_out(record, url, self.options.run):
                yield link_key(target, self.partitions), links
        else:
            fetch = fetch_part(record)
            updates = updates_from_doc(record, fetch)
            for digest, claim in claims_from_doc(record, fetch):
                yield claim_key(digest, self.partitions), claim
        for target, update in updates:
            yield batch_key(target, self.partitions), update

    def combiner(self, key, values):
        yield key, self.folded(key, values)

    def reducer(self, key, values):
        folded = self.folded(key, values)
        if is_link_key(key):
            self.count(self.LINKS, len(folded["inlinks"]))
        elif not is_claim_key(key):
            self.count(self.URLS)
        else:
            self.count(self.SIGNATURES if is_signature_key(url_of_batch_key(key)) else self.DIGESTS)
        yield key, folded

    @staticmethod
    def folded(key, values):
        if is_link_key(key):
            return fold_links(values)
        return fold_claims(values) if is_claim_key(key) else fold(values)


if __name__ == "__main__":
    MRDbBatch.run()
