"""Programs under test: lowering and the compile cache, catalogs, sharded programs, FFI."""
