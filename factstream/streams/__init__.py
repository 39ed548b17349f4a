"""Stream processing plumbing: the faust app, ordering, dead letters, offsets."""
