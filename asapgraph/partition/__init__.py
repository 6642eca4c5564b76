"""Who owns which vertex: partitioners and the partitioned loader that builds each
rank's local graph (local CSR, ghost/boundary maps, ownership)."""
