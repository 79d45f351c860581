package tokenmanager

// The names of the records a manager stores (spec/token-store/README.md, "Names and keys"): a
// scope's tokens, intent and lock, and a pending sign-in's, by its state. These are a token file's
// keys; a Redis storage maps each to its Redis key (redisstorage.Key).

import (
	"crypto/sha256"
	"encoding/hex"
)

// namespace starts every name.
const namespace = "tenant-integration:"

// names are the names of one scope's records.
type names struct{ tokens, intent, lock string }

// scopeNames are the names of the scope <origin>:<clientId> (session "") or
// <origin>:<clientId>:<session>: tenant-integration:<scope>:<kind>.
func scopeNames(origin, clientID, session string) names {
	scope := namespace + origin + ":" + clientID + ":"
	if session != "" {
		scope += session + ":"
	}
	return names{tokens: scope + "tokens", intent: scope + "intent", lock: scope + "lock"}
}

// pendingPrefix starts the name of every pending sign-in of a client.
func pendingPrefix(origin, clientID string) string {
	return namespace + origin + ":" + clientID + ":pending:"
}

// pendingKey is the key of a pending sign-in: the first 32 lowercase hex digits of SHA-256 of its
// state (128 bits), so that the state itself never appears in a name, a key or a log.
func pendingKey(state string) string {
	sum := sha256.Sum256([]byte(state))
	return hex.EncodeToString(sum[:16])
}
