from ledgermirror.cli import main

raise SystemExit(main())
