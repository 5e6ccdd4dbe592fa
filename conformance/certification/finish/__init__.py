"""The end of a run: the one pipeline from the merged records to the written bundle."""
