package main

// The sessions feature of the actor (PROTOCOL.md, "Sessions"): a tokenmanager.Sessions beside the
// actor's Manager, on the same storage, serving the sessions a sign-in or call command names. Each
// session signs in as its own sandbox user (sandbox_user), and each call checks that the tenant
// answers a session's token with that session's user.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tenant-integration/sdk/packages/go/tokenmanager"
)

// sessionsAtOnce bounds the sessions one actor serves at once for a command: a server's users come
// together after an expiry. Their requests share connectionsPerTenant connections (the others wait
// for one), as a server's pool to one tenant would: a few hundred connections opened at one instant
// overflow the sandbox's accept queue, and the connections reset are no test of the kit.
const sessionsAtOnce = 64

// connectionsPerTenant bounds the actor's connections to the tenant for its sessions.
const connectionsPerTenant = 32

// idleConnections is how long an idle connection to the tenant is kept: less than the sandbox's
// keep-alive timeout (Node's default, 5 s).
const idleConnections = 3 * time.Second

// signInsAtOnce bounds the sign-ins of a command in flight at once.
const signInsAtOnce = 16

// session is one session a command names: its id and the sandbox user it signs in as.
type session struct {
	ID   string `json:"id"`
	User string `json:"user"`
}

// sessionsOf reads a command's "sessions" (nil when it has none).
func sessionsOf(command map[string]any) ([]session, error) {
	raw, ok := command["sessions"]
	if !ok {
		return nil, nil
	}
	encoded, _ := json.Marshal(raw)
	var list []session
	if err := json.Unmarshal(encoded, &list); err != nil || len(list) == 0 {
		return nil, &actorError{"UNEXPECTED", `"sessions" must be a non-empty list of {"id","user"}`}
	}
	return list, nil
}

// sessionsLock is the lock option of the actor's Sessions: none for "lock": "none", the process lock
// for memory, else nil, so that each storage gives its own (filestorage: a lock directory per session).
func sessionsLock(c config, lock tokenmanager.Lock) tokenmanager.Lock {
	kind, _ := c.Storage["kind"].(string)
	if c.Storage["lock"] == "none" || kind == "memory" {
		return lock
	}
	return nil
}

// eachSession runs task for every session, at most limit at once, and returns the failures.
func eachSession(list []session, limit int, task func(session) error) []error {
	var mu sync.Mutex
	var failures []error
	gate := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Add(1)
		gate <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-gate }()
			if err := task(s); err != nil {
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failures
}

// sessionFailure names the session a kit error came from, keeping the kit's code.
type sessionFailure struct {
	id  string
	err error
}

func (f *sessionFailure) Error() string { return "session " + f.id + ": " + f.err.Error() }
func (f *sessionFailure) Unwrap() error { return f.err }

// firstFailure is the answer to a command some of whose sessions failed: the first failure's code,
// and how many failed.
func firstFailure(failures []error, of int) error {
	first := failures[0]
	code := "UNEXPECTED"
	var kit *tokenmanager.Error
	var own *actorError
	if errors.As(first, &kit) {
		code = string(kit.Code)
	} else if errors.As(first, &own) {
		code = own.code
	}
	return &actorError{code, fmt.Sprintf("%d of %d sessions failed; the first: %v", len(failures), of, first)}
}

// signInSessions signs every session in as its user: the authorize request approved by the sandbox
// as that user, the callback completed with the binding of the browser that began it.
func (a *actor) signInSessions(ctx context.Context, list []session) (map[string]any, error) {
	a.serve(list)
	failures := eachSession(list, signInsAtOnce, func(s session) error {
		if err := a.signInSession(ctx, s); err != nil {
			return &sessionFailure{s.ID, err}
		}
		return nil
	})
	if len(failures) > 0 {
		return nil, firstFailure(failures, len(list))
	}
	return map[string]any{"signedIn": len(list)}, nil
}

func (a *actor) signInSession(ctx context.Context, s session) error {
	begun, err := a.sessions.BeginSignIn(ctx, s.ID, "")
	if err != nil {
		return err
	}
	callback, err := a.approve(ctx, begun.URL, s.User)
	if err != nil {
		return err
	}
	_, err = a.sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: callback, Binding: begun.Binding, SessionID: s.ID})
	return err
}

// approve requests the authorize URL as the sandbox's user (sandbox_user; the sandbox approves at
// once) and returns the callback URL its redirect names.
func (a *actor) approve(ctx context.Context, authorize, user string) (string, error) {
	response, err := a.get(ctx, a.http, authorize+"&sandbox_user="+url.QueryEscape(user))
	if err != nil {
		return "", &actorError{"UNEXPECTED", "the authorize request failed"}
	}
	_ = response.Body.Close()
	location := response.Header.Get("Location")
	if (response.StatusCode != http.StatusFound && response.StatusCode != http.StatusSeeOther) || location == "" {
		return "", &actorError{"UNEXPECTED", fmt.Sprintf("the authorize request was answered %d without a redirect", response.StatusCode)}
	}
	base, _ := url.Parse(authorize)
	callback, err := base.Parse(location)
	if err != nil {
		return "", &actorError{"UNEXPECTED", "the redirect's Location is not a URL"}
	}
	return callback.String(), nil
}

// callSessions has every session's client ask for the user at once, as a server serving all its
// users does; "crossed" lists each session answered with another user than its own.
func (a *actor) callSessions(ctx context.Context, list []session) (map[string]any, error) {
	a.serve(list)
	before := a.refreshes.Load()
	var mu sync.Mutex
	status := http.StatusOK
	crossed := []map[string]any{}
	failures := eachSession(list, sessionsAtOnce, func(s session) error {
		code, user, err := a.userOf(ctx, s.ID)
		if err != nil {
			return &sessionFailure{s.ID, err}
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case code != http.StatusOK:
			if status == http.StatusOK {
				status = code
			}
		case user != s.User:
			crossed = append(crossed, map[string]any{"id": s.ID, "user": s.User, "got": user})
		}
		return nil
	})
	if len(failures) > 0 {
		return nil, firstFailure(failures, len(list))
	}
	return map[string]any{"status": status, "refreshed": a.refreshes.Load() > before, "sessions": len(list), "crossed": crossed}, nil
}

// userOf is the status of GET /api/v1/auth/user through session id's client, and the id of the
// user it answered.
func (a *actor) userOf(ctx context.Context, id string) (int, string, error) {
	client, err := a.sessions.Client(id)
	if err != nil {
		return 0, "", err
	}
	response, err := a.get(ctx, client, strings.TrimRight(a.config.Tenant, "/")+"/api/v1/auth/user")
	if err != nil {
		var kit *tokenmanager.Error
		if errors.As(err, &kit) {
			return 0, "", kit
		}
		return 0, "", &actorError{"UNEXPECTED", "the user request failed"}
	}
	defer response.Body.Close()
	var user struct {
		ID any `json:"id"`
	}
	if response.StatusCode == http.StatusOK {
		if err := json.NewDecoder(response.Body).Decode(&user); err != nil {
			return 0, "", &actorError{"UNEXPECTED", "the user's answer is not JSON"}
		}
	}
	return response.StatusCode, fmt.Sprint(user.ID), nil
}

// refuseIDs gives each id to every call of the sessions object that takes one; each must be
// INVALID_SESSION_ID. "accepted" lists the ids some call took.
func (a *actor) refuseIDs(ctx context.Context, command map[string]any) (map[string]any, error) {
	raw, _ := command["ids"].([]any)
	if len(raw) == 0 {
		return nil, &actorError{"UNEXPECTED", `"ids" must be a non-empty list of strings`}
	}
	refused, accepted := 0, []string{}
	for _, value := range raw {
		id, _ := value.(string)
		_, errManager := a.sessions.Manager(id)
		_, errBegin := a.sessions.BeginSignIn(ctx, id, "")
		_, errClient := a.sessions.Client(id)
		_, errSignedIn := a.sessions.IsSignedIn(ctx, id)
		ok := true
		for _, err := range []error{errManager, errBegin, errClient, errSignedIn, a.sessions.SignOut(ctx, id), a.sessions.Revoke(ctx, id)} {
			ok = ok && errors.Is(err, tokenmanager.ErrInvalidSessionID)
		}
		if ok {
			refused++
		} else {
			accepted = append(accepted, id)
		}
	}
	return map[string]any{"refused": refused, "accepted": accepted}, nil
}

// replayCallback begins a sign-in for a session of its own, has the tenant approve it as user, and
// completes the callback with another browser's binding (refused before any exchange), then with
// the right one (the sign-in is used up): the login CSRF of RFC 9700 §4.7.1.
func (a *actor) replayCallback(ctx context.Context, command map[string]any) (map[string]any, error) {
	user, _ := command["user"].(string)
	id := "replayed." + a.config.Name
	begun, err := a.sessions.BeginSignIn(ctx, id, "")
	if err != nil {
		return nil, err
	}
	callback, err := a.approve(ctx, begun.URL, user)
	if err != nil {
		return nil, err
	}
	codeOf := func(err error) string {
		var kit *tokenmanager.Error
		if errors.As(err, &kit) {
			return string(kit.Code)
		}
		if err == nil {
			return "accepted"
		}
		return "UNEXPECTED"
	}
	_, other := a.sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: callback, Binding: tokenmanager.NewBinding(), SessionID: id})
	_, own := a.sessions.CompleteSignIn(ctx, tokenmanager.Callback{URL: callback, Binding: begun.Binding, SessionID: id})
	signedIn, err := a.sessions.IsSignedIn(ctx, id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"refused": codeOf(other), "after": codeOf(own), "signedIn": signedIn}, nil
}

// serve records the sessions a command names: their managers are closed at the actor's exit.
func (a *actor) serve(list []session) {
	a.servedMu.Lock()
	defer a.servedMu.Unlock()
	if a.served == nil {
		a.served = map[string]bool{}
	}
	for _, s := range list {
		a.served[s.ID] = true
	}
}

// closeSessions closes the manager of every session the actor served (its intent's beats and
// retried writes stop), as a server does when it shuts down: Sessions has no close of its own.
func (a *actor) closeSessions() error {
	a.servedMu.Lock()
	defer a.servedMu.Unlock()
	for id := range a.served {
		m, err := a.sessions.Manager(id)
		if err != nil {
			return err
		}
		if err := m.Close(); err != nil {
			return err
		}
	}
	return nil
}
