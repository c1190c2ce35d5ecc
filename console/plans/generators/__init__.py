"""The plan generators' parts, over :mod:`console.plans.layout`: what a generator is asked
(:mod:`~console.plans.generators.options`). :mod:`console.plans.generate` runs the goals and keeps
every public name importable from there."""
