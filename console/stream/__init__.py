"""The audit log as a stream: each entry appended to a JSON-lines file and/or produced to a Kafka
topic, from the store, in order, at least once, with its id (:mod:`console.stream.shipper`)."""
