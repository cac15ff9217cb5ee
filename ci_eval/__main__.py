from ci_eval.main import main

raise SystemExit(main())
