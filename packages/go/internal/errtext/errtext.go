// Package errtext writes the text of the kit's errors, one rule for every package: the code, the
// message, and the cause's text, as fmt.Errorf("…: %w") chains print, so that a printed error says
// why (permission denied and the path, connection refused) and not only that something failed.
// The causes the kit attaches are scrubbed of secrets before they are attached: nothing here sees a
// token.
package errtext

import "strings"

// Text is "CODE: message: cause". The message is left out when empty, and the cause when it has no
// text or the message already holds it.
func Text(code, message string, cause error) string {
	text := code
	if message != "" {
		text += ": " + message
	}
	if cause == nil {
		return text
	}
	if why := cause.Error(); why != "" && !strings.Contains(message, why) {
		text += ": " + why
	}
	return text
}
