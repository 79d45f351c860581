"""Token storages and their locks (memory, file, Redis), and the protocol for bringing one's own."""
