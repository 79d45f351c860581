package tokenmanager

// Binding a sign-in to the browser that began it (spec/token-store/README.md, "Binding a sign-in to
// its browser"; login CSRF, RFC 9700 §4.7.1, RFC 6749 §10.12): a server's pending sign-ins live in
// one storage for every browser, so the state alone does not say which browser began one. The start
// gives the browser a binding (a cookie, or the app's own value), the pending record keeps its
// SHA-256, and the callback must bring the binding with that hash.

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// NewBinding is a new browser binding: 32 random bytes from the OS CSPRNG in base64url without
// padding (43 characters), the value of the sign-in cookie (signinhttp sets it).
func NewBinding() string { return newState() }

// BindingHash is what a pending record keeps of a binding: the SHA-256 of its UTF-8 bytes, 64
// lowercase hex digits. The binding itself is never stored, logged or put in a URL.
func BindingHash(binding string) string {
	sum := sha256.Sum256([]byte(binding))
	return hex.EncodeToString(sum[:])
}

// checkBinding is the refusal rule at the callback (step 6): STATE_MISMATCH when the record has a
// browser and the callback brings no binding ("" counts as none) or one of another hash (compared in
// constant time); and when the callback brings a binding but the record has none (a server binds
// every sign-in it begins, so an unbound one is not its own). Neither: not checked (a sign-in kept in
// the browser itself, or in one process).
func checkBinding(browser, binding string) error {
	if browser == "" && binding == "" {
		return nil
	}
	if browser == "" || binding == "" || subtle.ConstantTimeCompare([]byte(BindingHash(binding)), []byte(browser)) != 1 {
		return newError(CodeStateMismatch, "the sign-in was started in another browser")
	}
	return nil
}
