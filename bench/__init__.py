"""factstream's benchmarks: speed goals as ratios within one run on the real local stack."""
