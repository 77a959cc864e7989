"""Device drivers and their simulators: the shoe, the camera, the dealer's panel.

Drivers know nothing of games: they report what a device saw and take commands.
"""
