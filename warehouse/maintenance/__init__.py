"""Keeping a lake sound: checking it, merging small files, upgrading an older layout."""
