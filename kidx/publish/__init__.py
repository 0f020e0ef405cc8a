"""``kidx publish``: a static site of the index (HTML, JavaScript, JSON), made from the
runs the analysis operations select. Needs Jinja2 (``pip install 'kidx[publish]'``)."""
