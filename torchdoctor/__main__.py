"""`python -m torchdoctor`: torchdoctor/cli.py의 main()."""

from torchdoctor.cli import main

raise SystemExit(main())
