"""Speed of light: what an invocation costs (bytes moved, floating-point operations), what
the GPU can do (published and measured peaks), and how close a run came (docs/speed-of-light.md)."""
