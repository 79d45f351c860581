package tokenmanager

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"regexp"
)

// verifierPattern is RFC 7636 §4.1: code-verifier = 43*128unreserved.
var verifierPattern = regexp.MustCompile(`^[A-Za-z0-9\-._~]{43,128}$`)

// PKCEPair is a PKCE code verifier and its S256 challenge. The verifier is a secret until the
// exchange: String and the slog value show only the challenge.
type PKCEPair struct {
	Verifier  string
	Challenge string
}

// String shows the challenge only.
func (p PKCEPair) String() string {
	return "PKCEPair{Challenge: " + p.Challenge + ", Verifier: [redacted]}"
}

// NewPKCEPair makes a verifier of length characters (43 to 128; 64 is a good choice) from the OS
// CSPRNG, each character carrying 6 uniformly random bits, and its S256 challenge.
// It fails with INVALID_VERIFIER for a length outside 43..128. See RFC 7636 §4.1, §4.2.
func NewPKCEPair(length int) (PKCEPair, error) {
	if length < 43 || length > 128 {
		return PKCEPair{}, newError(CodeInvalidVerifier, "the verifier length must be from 43 to 128")
	}
	random := make([]byte, (length*3+3)/4)
	if _, err := rand.Read(random); err != nil {
		return PKCEPair{}, err
	}
	verifier := base64.RawURLEncoding.EncodeToString(random)[:length]
	challenge, err := CodeChallenge(verifier)
	return PKCEPair{Verifier: verifier, Challenge: challenge}, err
}

// CodeChallenge is BASE64URL(SHA256(ASCII(verifier))), the S256 method. It fails with
// INVALID_VERIFIER (never quoting the verifier) when the verifier is not 43 to 128 characters of
// A-Z a-z 0-9 - . _ ~. See RFC 7636 §4.2, Appendix B.
func CodeChallenge(verifier string) (string, error) {
	if !verifierPattern.MatchString(verifier) {
		return "", newError(CodeInvalidVerifier, "a PKCE verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1)")
	}
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}
