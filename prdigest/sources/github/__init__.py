"""The GitHub source: GraphQL batches, REST diffs, what is open now, its client and retries."""
