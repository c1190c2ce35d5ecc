"""The pure arithmetic of moving replicas: waves, throttle lists, progress and ETA, what a cancel means."""
