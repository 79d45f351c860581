package tokenmanager

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
)

// newState is 256 random bits from the OS CSPRNG, base64url: 43 characters. The same form names
// token records (id, session) and refresh intents (holder). See RFC 6749 §10.12.
func newState() string {
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		panic("tokenmanager: the OS random source failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(random)
}

// statesEqual compares in time that does not depend on where the two differ. See RFC 6749 §10.12.
func statesEqual(received, stored string) bool {
	return subtle.ConstantTimeCompare([]byte(received), []byte(stored)) == 1
}
