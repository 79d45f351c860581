// Package sessionid is the rule of a session id (spec/token-store/README.md, "The session id"), the
// one copy of it: tokenmanager.CheckSessionID makes its INVALID_SESSION_ID error from it, and the
// pending record's check (internal/pendingrecord) reads a record's sessionId with it.
package sessionid

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxLength is the longest session id, in characters.
const MaxLength = 128

// Rule ends every INVALID_SESSION_ID message: the rule, and what to do with another id.
const Rule = "a session id is 1 to 128 characters from A-Z a-z 0-9 - . _ ~ @ + = | (hash or encode any other id)"

// shownCharacters: how many characters of a bad id a message shows.
const shownCharacters = 16

// Problem is why id is not a session id ("" when it is one): "it is empty", then, for the first
// character not allowed, `"<c>" at character <n> is not allowed`, then "it is <n> characters long".
// Characters are what range yields: code points, and each byte that is not UTF-8.
func Problem(id string) string {
	if id == "" {
		return "it is empty"
	}
	length := 0
	for _, c := range id {
		length++
		if !allowed(c) {
			return fmt.Sprintf("\"%s\" at character %d is not allowed", show(c), length)
		}
	}
	if length > MaxLength {
		return fmt.Sprintf("it is %d characters long", length)
	}
	return ""
}

// Valid reports whether id is a session id.
func Valid(id string) bool { return Problem(id) == "" }

// Message is the message of INVALID_SESSION_ID for id, whose problem is problem.
func Message(id, problem string) string {
	return fmt.Sprintf("invalid session id \"%s\": %s; %s", Shown(id), problem, Rule)
}

// allowed: c is one of A–Z a–z 0–9 - . _ ~ @ + = |.
func allowed(c rune) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.ContainsRune("-._~@+=|", c)
}

// Shown is the id's first 16 characters, escaped, followed by "..." when it has more: what a message
// or a log line may show of an id that is not one.
func Shown(id string) string {
	var b strings.Builder
	count := 0
	for _, c := range id {
		if count == shownCharacters {
			b.WriteString("...")
			break
		}
		b.WriteString(show(c))
		count++
	}
	return b.String()
}

// show writes c as itself when it is printable ASCII other than " and \, else as \u{X} (X its code
// point in uppercase hex, without padding). A byte that is not UTF-8 is range's utf8.RuneError.
func show(c rune) string {
	if c >= '!' && c <= '~' && c != '"' && c != '\\' {
		return string(c)
	}
	if c == utf8.RuneError {
		return `\u{FFFD}`
	}
	return fmt.Sprintf(`\u{%X}`, c)
}
