"""The plan generators' parts, over :mod:`console.plans.layout`, one module per family of goals:

* :mod:`~console.plans.generators.options`: what a generator is asked, checked before anything is planned;
* :mod:`~console.plans.generators.context`: what every goal shares (the :class:`Context` a goal runs
  in: which partitions may move, which brokers receive, how load scores; what a plan moved);
* :mod:`~console.plans.generators.brokers`: decommission, add brokers, rebalance;
* :mod:`~console.plans.generators.balance`: the balance loop those goals run, its lower bound, and
  preferred leaders evened out; :mod:`~console.plans.generators.candidates`: which replica a balance
  step moves;
* :mod:`~console.plans.generators.replication`: the replication factor and fix racks;
* :mod:`~console.plans.generators.official`: the official tool's ``--generate``;
* :mod:`~console.plans.generators.drain`: drain a log dir.

:mod:`console.plans.generate` runs the goals (``generate``, its report); each name is imported from
the module that defines it."""
