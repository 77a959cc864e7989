"""Running as a service: systemd's readiness and watchdog (:mod:`~table_controller.service.notify`)."""
