package tokenmanager

// Revocation (RFC 7009; the TypeScript kit's revoke.ts).

import (
	"context"
	"errors"
	"net/url"
)

// Revoke revokes the current access token at POST /oauth/revoke, which disconnects the integration,
// then clears the tokens. An expired access token is refreshed first; without a session it only
// clears. On failure the tokens are kept. Assumption (not in the service description, which does not
// show the request's shape): an RFC 7009 §2.1 form body, token and token_type_hint, with client_id as
// a public client's identification (RFC 6749 §2.3, §3.2.1).
func (m *Manager) Revoke(ctx context.Context) error {
	if err := m.made(); err != nil {
		return err
	}
	defer m.use()()
	token, err := m.AccessToken(ctx)
	if errors.Is(err, ErrNotSignedIn) || errors.Is(err, ErrSessionEnded) {
		return m.SignOut(ctx)
	}
	if err != nil {
		return err
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}, "client_id": {m.clientID}}
	if _, err := m.post(ctx, "/oauth/revoke", form.Encode(), "application/x-www-form-urlencoded", []string{token}, 1); err != nil {
		return err
	}
	if err := m.clear(ctx); err != nil {
		return err
	}
	m.log.Info("revoked")
	m.emit(Event{Kind: EventRevoked})
	m.emit(Event{Kind: EventSignedOut, Revoked: true})
	return nil
}
