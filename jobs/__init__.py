"""The five MapReduce jobs of a crawl layer, as thin mrjob classes over mrcrawl."""
