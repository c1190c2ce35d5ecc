"""The review's rules, written once: each finding's code, severity, words and a vectorised
condition over a batch of plan entries joined with their partitions' state
(:mod:`~console.plans.rules.catalog`), the findings about the whole plan from the review's totals
(:mod:`~console.plans.rules.overall`), the engine that evaluates and orders them
(:mod:`~console.plans.rules.engine`) and the in-process runner (:mod:`~console.plans.rules.local`).
The Spark runner, which evaluates the same rules over Arrow batches inside Spark, is
:mod:`console.pipeline.spark_rules`."""
