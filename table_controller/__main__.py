from table_controller.cli import main

raise SystemExit(main())
