"""Notifications where the team works, through Apprise: events (:mod:`.events`), where they go
(:mod:`.settings`), delivery that never holds a run up (:mod:`.delivery`), and :func:`emit`
(:mod:`.hub`), the one call the services and the executor make."""
