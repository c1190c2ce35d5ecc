"""The console's own work as Prometheus metrics: instruments updated where things happen
(:mod:`console.metrics.instruments`), the store read at scrape time
(:mod:`console.metrics.collector`), served on an address of its own (:mod:`console.metrics.server`)."""
