"""Configuration: the sweep file's schema, loading, overrides, arm expansion, resolution."""
