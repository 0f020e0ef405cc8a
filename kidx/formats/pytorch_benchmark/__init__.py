"""PyTorch OSS benchmark records ("v3"), both ways: ``importer.py`` reads them (``kidx import
pytorch-benchmark``), ``exporter.py`` writes them (``kidx export --format
pytorch-benchmark``); kidx's own records carry each run and object as canonical JSON in
``extra_info``, so that importing them gives back the same runs and digests."""
