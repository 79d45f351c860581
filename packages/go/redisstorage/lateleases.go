package redisstorage

// Leases a lock's SET NX may have taken without this process knowing (decision D4 of the kits): a
// SET NX that was sent and got no reply (a primary stopped, then resumed; a reply lost with its
// connection) may run on the server later and hold the lease for a whole lease time with nobody
// behind it. The TypeScript kit releases such a lease when the late reply arrives; go-redis drops a
// connection whose reply is late, so here the reply never comes: the lock remembers the owner value
// it sent and releases that lease (compare-and-DEL, then the release announcement) at its next try
// on the key, as soon as the server answers again.

import "sync"

// maxLateLeases bounds the owners remembered per key (a long outage makes one per call): the oldest
// is dropped first, its lease left to expire.
const maxLateLeases = 8

type lateLeases struct {
	mu    sync.Mutex
	byKey map[string][]*lateLease
}

type lateLease struct {
	owner string
	// looked: a release already found the key not held by owner once. A second such answer
	// forgets it: the first may have come from a server that had just resumed and not yet run the
	// late SET.
	looked bool
}

// remember notes that the SET NX of key with owner was sent and got no reply.
func (l *lateLeases) remember(key, owner string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byKey == nil {
		l.byKey = map[string][]*lateLease{}
	}
	leases := append(l.byKey[key], &lateLease{owner: owner})
	if len(leases) > maxLateLeases {
		leases = leases[len(leases)-maxLateLeases:]
	}
	l.byKey[key] = leases
}

// forget drops owner: its SET NX's reply came after all.
func (l *lateLeases) forget(key, owner string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.drop(key, owner)
}

func (l *lateLeases) drop(key, owner string) {
	leases := l.byKey[key]
	for i, lease := range leases {
		if lease.owner == owner {
			leases = append(leases[:i:i], leases[i+1:]...)
			break
		}
	}
	if len(leases) == 0 {
		delete(l.byKey, key)
		return
	}
	l.byKey[key] = leases
}

// owners are the owner values of key still to release.
func (l *lateLeases) owners(key string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var owners []string
	for _, lease := range l.byKey[key] {
		owners = append(owners, lease.owner)
	}
	return owners
}

// answered records a release of owner's lease: released, it is forgotten; not held, it is
// forgotten at the second such answer.
func (l *lateLeases) answered(key, owner string, released bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, lease := range l.byKey[key] {
		if lease.owner != owner {
			continue
		}
		if released || lease.looked {
			l.drop(key, owner)
		} else {
			lease.looked = true
		}
		return
	}
}
