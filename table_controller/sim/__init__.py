"""The simulated table: simulated shoe, camera, dealer and supervisor around the real controller."""
