"""The pytest session: the plugin, its options, the backend under test."""
